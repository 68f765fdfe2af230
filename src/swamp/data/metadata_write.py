"""Building metadata.yaml of a new data version without pydantic: the
writing twin of metadata_read.py. ``DataMetadata`` (data/metadata.py) stays
the one schema; swamp builds these documents itself, so when every value is
exactly of the type the schema keeps (a version written by a method always
is) the document is laid out here, keys in the schema's order, as
``model_dump`` would. Anything else goes to the schema, which normalizes it
or raises its ValidationError: what is written is always what the schema
would have written (tests/unit/test_metadata_write.py compares the two)."""

from __future__ import annotations

from typing import Any

#: DataMetadata's fields in order: (name, default) where ... is required
_TOP: tuple[tuple[str, Any], ...] = (
    ("id", ...), ("name", ...), ("version", ...), ("specName", ...), ("kind", ...), ("contentType", ...),
    ("lifetime", ...), ("garbageCollection", None), ("streaming", False), ("tags", dict), ("owner", ...),
    ("createdAt", ...), ("size", ...), ("sha256", ...),
)
_OWNER: tuple[tuple[str, Any], ...] = (
    ("definitionId", ...), ("definitionName", ...), ("modelType", ...), ("methodName", None),
    ("outputId", None), ("workflowRunId", None), ("workflowName", None), ("stepName", None),
)
_STR = frozenset({"id", "name", "specName", "contentType", "lifetime", "createdAt", "sha256"})
_KINDS = ("resource", "file")


def _fits_top(name: str, value: Any) -> bool:
    if name in _STR:
        return type(value) is str
    if name in ("version", "size"):
        return type(value) is int
    if name == "kind":
        return type(value) is str and value in _KINDS
    if name == "garbageCollection":
        return value is None or type(value) is int or type(value) is str
    if name == "streaming":
        return type(value) is bool
    if name == "tags":
        return type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items())
    if name == "owner":
        return _fits_owner(value)
    return False  # unknown key: the schema names it


_OWNER_NAMES = {name: default for name, default in _OWNER}


def _fits_owner(value: Any) -> bool:
    if type(value) is not dict:
        return False
    for name, default in _OWNER:
        if default is ... and name not in value:
            return False
    for name, v in value.items():
        if name not in _OWNER_NAMES:
            return False
        if not (type(v) is str or (v is None and _OWNER_NAMES[name] is not ...)):
            return False
    return True


def _exact(fields: dict) -> bool:
    for name, default in _TOP:
        if default is ... and name not in fields:
            return False
    return all(_fits_top(name, value) for name, value in fields.items())


def _laid_out(fields: dict) -> dict:
    """``DataMetadata(**fields).model_dump()`` for fields that fit exactly."""
    out: dict = {}
    for name, default in _TOP:
        if name == "owner":
            owner = fields["owner"]
            out["owner"] = {n: owner.get(n, d if d is not ... else None) for n, d in _OWNER}
        elif name == "tags":
            out["tags"] = dict(fields["tags"]) if "tags" in fields else {}
        else:
            out[name] = fields[name] if name in fields else default
    return out


def without_none(doc: dict) -> dict:
    """``model_dump(exclude_none=True)`` of a laid-out document: no None at
    the top or in the owner (the schema's two models)."""
    out = {k: v for k, v in doc.items() if v is not None}
    out["owner"] = {k: v for k, v in doc["owner"].items() if v is not None}
    return out


def build(fields: dict) -> dict:
    """The whole metadata document of a new version (every field, as
    ``model_dump()`` gives it); write ``without_none`` of it."""
    if _exact(fields):
        return _laid_out(fields)
    from swamp.data.metadata import DataMetadata

    return DataMetadata(**fields).model_dump()
