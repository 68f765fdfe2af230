"""Inputs declared as a small JSON-Schema object (``properties``,
``required``, ``additionalProperties``, ``default``, ``enum``): validated and
coerced before anything runs. Used by definitions and workflows alike."""

from __future__ import annotations

import json
from typing import Any, Callable

from swamp.errors import ValidationError
from swamp.util.cli_strings import CliString
from swamp.util.names import did_you_mean

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
        raise ValidationError(f"{text!r} is not a valid {want}", hint=json_hint(want)) from None
    return text


def json_hint(want: str | None, key: str = "NAME") -> str | None:
    """How to give an array or an object on the command line (JSON)."""
    if want == "array":
        return f"""an array is JSON: --input '{key}=["eu", "us"]' (or --input-file FILE)"""
    if want == "object":
        return f"""an object is JSON: --input '{key}={{"a": 1}}' (or a dotted --input {key}.a=1)"""
    return None


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
        raise ValidationError(f"{key}: {e.message}", hint=e.hint and e.hint.replace("NAME", key)) from None


def each_field(values: dict, convert: Callable[[str, Any], Any]) -> dict:
    """``{key: convert(key, value)}``, every field tried: one ValidationError
    naming every field that failed (in key order), not only the first."""
    out, problems, hint = {}, [], None
    for key in sorted(values):
        try:
            out[key] = convert(key, values[key])
        except ValidationError as e:
            problems.append(e.message)
            hint = hint or e.hint
    if problems:
        raise ValidationError("; ".join(problems), hint=hint)
    return {key: out[key] for key in values}


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
            hint = hint or (e.hint and e.hint.replace("NAME", key))
            continue
        problem = _check(value, prop or {}, key)
        if problem:
            problems.append(problem)
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


def _check(value: Any, prop: dict, where: str = "") -> str | None:
    """The first way ``value`` breaks the JSON-Schema ``prop`` (the keywords
    a declared input uses: type, enum, const, string length and pattern,
    number bounds, array size, items and uniqueness, nested properties and
    required), or None."""
    at = f"{where}: " if where else ""
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
            return f"{at}expected {want}, got {type(value).__name__}"
    if "enum" in prop and value not in prop["enum"]:
        return f"{at}must be one of {prop['enum']}"
    if "const" in prop and value != prop["const"]:
        return f"{at}must be {prop['const']!r}"
    if isinstance(value, str):
        return _check_string(value, prop, at)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _check_number(value, prop, at)
    if isinstance(value, list):
        return _check_array(value, prop, where, at)
    if isinstance(value, dict):
        return _check_object(value, prop, where, at)
    return None


def _check_string(value: str, prop: dict, at: str) -> str | None:
    import re

    if "minLength" in prop and len(value) < prop["minLength"]:
        return f"{at}must be at least {prop['minLength']} characters long"
    if "maxLength" in prop and len(value) > prop["maxLength"]:
        return f"{at}must be at most {prop['maxLength']} characters long"
    if "pattern" in prop and not re.search(prop["pattern"], value):
        return f"{at}must match {prop['pattern']!r}"
    return None


def _check_number(value: float, prop: dict, at: str) -> str | None:
    if "minimum" in prop and value < prop["minimum"]:
        return f"{at}must be at least {prop['minimum']}"
    if "maximum" in prop and value > prop["maximum"]:
        return f"{at}must be at most {prop['maximum']}"
    if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"]:
        return f"{at}must be more than {prop['exclusiveMinimum']}"
    if "exclusiveMaximum" in prop and value >= prop["exclusiveMaximum"]:
        return f"{at}must be less than {prop['exclusiveMaximum']}"
    return None


def _check_array(value: list, prop: dict, where: str, at: str) -> str | None:
    if "minItems" in prop and len(value) < prop["minItems"]:
        return f"{at}needs at least {prop['minItems']} item(s), got {len(value)}"
    if "maxItems" in prop and len(value) > prop["maxItems"]:
        return f"{at}takes at most {prop['maxItems']} item(s), got {len(value)}"
    if prop.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
        return f"{at}items must be unique"
    if isinstance(prop.get("items"), dict):
        for i, item in enumerate(value):
            problem = _check(item, prop["items"], f"{where}[{i}]")
            if problem:
                return problem
    return None


def _check_object(value: dict, prop: dict, where: str, at: str) -> str | None:
    props = prop.get("properties") or {}
    for key in prop.get("required") or []:
        if key not in value:
            return f"{at}needs {key!r}"
    for key, item in value.items():
        sub = props.get(key)
        if sub is None:
            if prop.get("additionalProperties") is False:
                return f"{at}unknown key {key!r}"
            continue
        problem = _check(item, sub, f"{where}.{key}" if where else key)
        if problem:
            return problem
    return None
