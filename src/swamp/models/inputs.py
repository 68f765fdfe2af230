"""Inputs declared as a small JSON-Schema object (``properties``,
``required``, ``additionalProperties``, ``default``, ``enum``): validated and
coerced before anything runs. Used by definitions and workflows alike."""

from __future__ import annotations

import json
from typing import Any

from swamp.errors import ValidationError
from swamp.util.names import did_you_mean


class CliString(str):
    """A value typed as KEY=VALUE on the command line: coerced to the
    schema's type where there is one, a string where there is none."""


_TYPES = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool,
    "array": list, "object": dict, "null": type(None),
}


def coerce(value: Any, prop: dict | None) -> Any:
    if isinstance(value, dict):  # nested from a dotted --input: each part by its own schema
        props = (prop or {}).get("properties") or {}
        return {k: _plain(coerce(v, props.get(k))) for k, v in value.items()}
    if not isinstance(value, CliString):
        return value
    want = (prop or {}).get("type")
    text = str(value)
    try:
        if want == "integer":
            return int(text)
        if want == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if want == "boolean":
            low = text.lower()
            if low in ("true", "1", "yes"):
                return True
            if low in ("false", "0", "no"):
                return False
            raise ValueError(text)
        if want in ("array", "object"):
            return json.loads(text)
    except ValueError:
        raise ValidationError(f"{text!r} is not a valid {want}") from None
    return text


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, CliString) else value


def coerce_field(key: str, value: Any, prop: dict | None) -> Any:
    """coerce() for one named field of a JSON Schema: an Optional's non-null
    branch decides the type, and an error names the field."""
    if prop and "anyOf" in prop:
        prop = next((p for p in prop["anyOf"] if p.get("type") != "null"), prop)
    try:
        return coerce(value, prop)
    except ValidationError as e:
        raise ValidationError(f"{key}: {e.message}") from None


def validate_inputs(schema: dict | None, values: dict, *, what: str = "inputs") -> dict:
    """Return the inputs with defaults applied and CLI strings coerced; raise
    one ValidationError listing every problem by name."""
    schema = schema or {}
    props: dict = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    additional = schema.get("additionalProperties", False)
    out: dict = {}
    problems: list[str] = []
    hint = None
    for key, value in values.items():
        prop = props.get(key)
        if prop is None and not additional:
            problems.append(f"{key}: unknown input")
            hint = hint or did_you_mean(key, props) or (
                f"declared inputs: {', '.join(sorted(props))}" if props else "this declares no inputs")
            continue
        try:
            value = coerce(value, prop)
        except ValidationError as e:
            problems.append(f"{key}: {e.message}")
            continue
        problem = _check(value, prop or {})
        if problem:
            problems.append(f"{key}: {problem}")
            continue
        out[key] = str(value) if isinstance(value, CliString) else value
    for key, prop in props.items():
        if key not in out and isinstance(prop, dict) and "default" in prop:
            out[key] = prop["default"]
    for key in required:
        if key not in out and not any(p.startswith(f"{key}:") for p in problems):
            problems.append(f"{key}: required input is missing")
    if problems:
        raise ValidationError(f"invalid {what}: " + "; ".join(problems), hint=hint)
    return out


def _check(value: Any, prop: dict) -> str | None:
    want = prop.get("type")
    if want:
        wants = want if isinstance(want, list) else [want]
        ok = False
        for w in wants:
            t = _TYPES.get(w)
            if t is None:
                ok = True
            elif w in ("integer", "number") and isinstance(value, bool):
                continue
            elif isinstance(value, t):
                ok = True
        if not ok:
            return f"expected {want}, got {type(value).__name__}"
    if "enum" in prop and value not in prop["enum"]:
        return f"must be one of {prop['enum']}"
    return None
