"""One document, one schema: every persisted file is validated by one
pydantic model whose errors name the file, the path inside it, what was
expected, and suggest a fix for unknown keys."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Callable, TypeVar, get_args, get_origin

from swamp.errors import SchemaError, ValidationError
from swamp.util.names import did_you_mean

T = TypeVar("T")


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


def place_key(path: str) -> tuple:
    """A sort key for places in a document (``jobs[0].steps[10].task``):
    their parts in order, indexes compared as numbers, so steps[2] comes
    before steps[10]."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"[.\[\]]+", path) if part)


def schema_problems(exc, model_cls=None) -> tuple[list[dict], str | None]:
    """A pydantic ValidationError as its errors, each ``{"path", "message"}``,
    sorted by place, and a hint for the first unknown key."""
    problems, hint = [], None
    for err in sorted(exc.errors(), key=lambda err: place_key(_loc(tuple(err["loc"])))):
        loc = _loc(tuple(err["loc"]))
        if err["type"] == "extra_forbidden":
            problems.append({"path": loc, "message": "unknown key"})
            if hint is None and model_cls is not None:
                hint = _unknown_key_hint(model_cls, tuple(err["loc"]))
        else:
            msg = err["msg"]
            if err["type"] == "value_error":  # a validator's own words, without pydantic's "Value error, "
                msg = str(err.get("ctx", {}).get("error", msg))
            problems.append({"path": loc, "message": msg})
    return problems, hint


def format_errors(exc, model_cls=None) -> tuple[str, str | None]:
    """Turn a pydantic ValidationError into one message listing every error
    with its path (sorted by place), and a hint for the first unknown key."""
    problems, hint = schema_problems(exc, model_cls)
    return "; ".join(f"{p['path']}: {p['message']}" for p in problems), hint


def _model_in(ann) -> tuple[Any, bool]:
    """The pydantic model inside an annotation (``M``, ``list[M]``,
    ``dict[str, M]``, ``M | None``), and whether it sits in a mapping, whose
    keys then appear in error locations."""
    if hasattr(ann, "model_fields"):
        return ann, False
    for arg in get_args(ann):
        model, keyed = _model_in(arg)
        if model is not None:
            return model, keyed or get_origin(ann) in (dict, Mapping)
    return None, False


def _unknown_key_hint(model_cls, loc: tuple) -> str | None:
    fields: Any = model_cls
    skip_key = False
    for part in loc[:-1]:
        if isinstance(part, int) or skip_key:
            skip_key = False
            continue
        f = getattr(fields, "model_fields", {}).get(part)
        if f is None:
            return None
        fields, skip_key = _model_in(f.annotation)
        if fields is None:
            return None
    names = set()
    for name, f in getattr(fields, "model_fields", {}).items():
        names.add(f.alias or name)
    return did_you_mean(str(loc[-1]), names)


def validate(model_cls: type[T], data: Any, source: str) -> T:
    from pydantic import ValidationError as PydanticError

    if data is None:
        data = {}
    try:
        return model_cls.model_validate(data)  # type: ignore[attr-defined]
    except PydanticError as e:
        problems, hint = schema_problems(e, model_cls)
        msg = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
        raise SchemaError(f"{source}: {msg}", problems=problems, hint=hint, source=source) from None


class DocView(dict):
    """A document read on the fast path: a plain dict with attribute access."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def read_light(data: Any, source: str, *, fields: dict[str, type | tuple], required: tuple[str, ...] = (),
               defaults: dict | None = None, schema: Callable[[], type] | None = None) -> DocView:
    """The fast path for reading a document: when its keys and their types are
    exactly what the schema allows, it is returned as a DocView without
    importing pydantic (whose import and model build cost a read-only
    command most of its time). Anything unexpected goes to the full schema,
    which names every problem, or accepts and normalizes the document."""
    if isinstance(data, dict) and all(k in data for k in required) and all(
            k in fields and _fits(v, fields[k]) for k, v in data.items()):
        return DocView({**(defaults or {}), **data})
    if schema is None:
        raise ValidationError(f"{source}: unexpected document")
    model = validate(schema(), data, source)
    return DocView(model.model_dump())


def _fits(value: Any, want: type | tuple) -> bool:
    if isinstance(value, bool) and want is not bool and (not isinstance(want, tuple) or bool not in want):
        return False
    return isinstance(value, want)
