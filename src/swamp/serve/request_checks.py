"""A request's query and body checked against its route before anything
runs: unknown, repeated or mistyped parameters and fields, and JSON that is
malformed or nested too deep, are a 400."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from swamp.errors import HttpError
from swamp.serve.calls import Route
from swamp.serve.wire import _read_raw


def parse_query(route: Route, params) -> dict:
    out: dict[str, Any] = {}
    for key in params.keys():
        if key not in route.query:
            raise HttpError("validation", f"unknown query parameter {key!r}",
                            hint=f"this route takes: {', '.join(sorted(route.query)) or 'none'}")
        values = params.getlist(key)
        if len(values) > 1:
            raise HttpError("validation", f"query parameter {key!r} given {len(values)} times")
        kind, _ = route.query[key]
        text = values[0]
        if kind is int:
            try:
                out[key] = int(text)
            except ValueError:
                raise HttpError("validation", f"query parameter {key!r} must be an integer, not {text!r}") from None
        elif kind is bool:
            low = text.lower()
            if low not in ("true", "false", "1", "0"):
                raise HttpError("validation", f"query parameter {key!r} must be true or false, not {text!r}")
            out[key] = low in ("true", "1")
        else:
            out[key] = text
    return out


async def read_body(route: Route, request: Request, limit: int) -> dict:
    headers = request.headers
    if route.body is None and "content-length" not in headers and "transfer-encoding" not in headers:
        return {}  # HTTP/1.1: a request without either header has no body (RFC 9112 6.3)
    raw = await _read_raw(request, limit)
    if route.body is None:
        if raw.strip():
            raise HttpError("validation", f"{route.method} {route.path} takes no body")
        return {}
    if not raw.strip():
        doc: Any = {}
    else:
        doc = parse_json(raw)
    if not isinstance(doc, dict):
        raise HttpError("validation", "the request body must be a JSON object")
    fields = route.body.fields
    unknown = sorted(set(doc) - set(fields))
    if unknown:
        raise HttpError("validation", f"unknown field(s) {', '.join(unknown)}",
                        hint=f"this route takes: {', '.join(sorted(fields))}")
    for name, (kind, required, _) in fields.items():
        if name not in doc:
            if required:
                raise HttpError("validation", f"the field {name!r} is required")
            continue
        value = doc[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            want = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false"}
            raise HttpError("validation", f"the field {name!r} must be {want.get(kind, kind)}")
    return doc


#: how deep a request body's arrays and objects may nest (a method's inputs need a few levels)
MAX_JSON_DEPTH = 64


def parse_json(raw: bytes, what: str = "the request body") -> Any:
    """A body as JSON, or a 400: not JSON, or nested deeper than MAX_JSON_DEPTH
    (which would otherwise exhaust the parser's or a later walk's stack)."""
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HttpError("validation", f"{what} is not valid JSON: {getattr(e, 'msg', e)}") from None
    except RecursionError:
        doc = None
        depth = MAX_JSON_DEPTH + 1
    else:
        depth = _depth(doc)
    if depth > MAX_JSON_DEPTH:
        raise HttpError("validation", f"{what} nests arrays and objects more than {MAX_JSON_DEPTH} deep",
                        hint="send a flatter document")
    return doc


def _depth(doc: Any) -> int:
    deepest, todo = 0, [(doc, 1)]
    while todo:
        value, level = todo.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, level)
            if level > MAX_JSON_DEPTH:
                return level
            todo.extend((v, level + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest
