"""Collecting inputs from --input-file, --stdin and --input (in that order,
later sources override earlier ones)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from swamp.errors import UsageError, ValidationError
from swamp.util.cli_strings import CliString


def input_options(f):
    """--input, --input-file and --stdin (click is imported here: the fast
    lane uses this module's parsing without click)."""
    import click

    f = click.option("--stdin", "stdin_input", is_flag=True,
                     help="Read the inputs from stdin: one JSON or YAML map, or NDJSON (one run a line).")(f)
    f = click.option("--input-file", type=click.Path(dir_okay=False),
                     help="A YAML or JSON file holding a map of inputs.")(f)
    f = click.option("--input", "input_", multiple=True, metavar="KEY=VALUE|JSON",
                     help="An input: KEY=VALUE (a.b=v nests; KEY:json=... parses JSON; KEY=@FILE reads "
                          "a file, KEY=\\@text is a literal '@'), or a JSON object.")(f)
    return f


def _load_map(text: str, source: str) -> dict:
    from swamp.util import yamlio

    data = yamlio.loads(text, source)  # YAML 1.2 reads JSON too
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValidationError(f"{source}: inputs must be a map, got {type(data).__name__}")
    return data


def collect_inputs(input_: tuple[str, ...], input_file: str | None, stdin_input: bool) -> dict:
    """The inputs of one run (``--stdin`` must then hold one map)."""
    batch = collect_batch(input_, input_file, stdin_input)
    if len(batch) > 1:
        raise UsageError("--stdin holds several runs (NDJSON), and this command runs one",
                         hint="give one JSON object on stdin")
    return batch[0]


def collect_batch(input_: tuple[str, ...], input_file: str | None, stdin_input: bool) -> list[dict]:
    """The inputs of each run: one map from --input-file or --stdin, or, on
    --stdin, NDJSON (one JSON object a line: one run each); --input applies
    over each."""
    if stdin_input and input_file:
        raise UsageError("--stdin and --input-file both give the inputs; use one")
    bases: list[dict] = [{}]
    if input_file:
        try:
            text = Path(input_file).read_text()
        except OSError as e:
            raise ValidationError(f"cannot read --input-file {input_file}: {e.strerror}") from None
        bases = [_load_map(text, input_file)]
    if stdin_input:
        bases = _stdin_maps(sys.stdin.read())
    out = []
    for base in bases:
        values = dict(base)
        for item in input_:
            merge_inputs(values, parse_input(item))
        out.append(values)
    return out


def _stdin_maps(text: str) -> list[dict]:
    if not text.strip():
        raise UsageError("--stdin got nothing", hint="pipe a JSON object (one run) or NDJSON (one run a line)")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines):
        try:
            maps = [json.loads(ln) for ln in lines]
        except json.JSONDecodeError:
            maps = None  # one JSON document over several lines, then
        if maps is not None:
            for i, m in enumerate(maps, 1):
                if not isinstance(m, dict):
                    raise ValidationError(f"<stdin> line {i}: inputs must be a JSON object")
            return maps
    return [_load_map(text, "<stdin>")]


def parse_input(item: str) -> dict:
    """One --input: a JSON object, or KEY=VALUE where KEY may be dotted
    (``a.b=v`` nests) and end in ``:json`` (the value is parsed as JSON),
    and VALUE may be ``@FILE`` (the file's text) or ``\\@...`` (a literal
    ``@``)."""
    stripped = item.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise UsageError(f"--input {item!r} is not valid JSON: {e.msg}") from None
        if not isinstance(data, dict):
            raise UsageError("--input JSON must be an object")
        return data
    if "=" not in item:
        raise UsageError(f"--input {item!r} must be KEY=VALUE or a JSON object")
    key, text = item.split("=", 1)
    as_json = key.endswith(":json")
    if as_json:
        key = key[: -len(":json")]
    path = key.split(".")
    if not key or not all(path):
        raise UsageError(f"--input {item!r} has an empty key" if not key else
                         f"--input {item!r}: a dotted key has an empty part")
    value: object
    if as_json:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"--input {key}:json value is not valid JSON: {e.msg}") from None
    elif text.startswith("\\@") or text.startswith("@@"):
        value = CliString(text[1:])  # a literal '@' ('@@' is the older spelling)
    elif text.startswith("@"):
        try:
            value = CliString(Path(text[1:]).read_text())
        except OSError as e:
            # Like an unreadable --input-file: the command line was fine, its input was not.
            raise ValidationError(f"--input {key}: cannot read {text[1:]}: {e.strerror}") from None
    else:
        value = CliString(text)
    for part in reversed(path[1:]):
        value = {part: value}
    return {path[0]: value}


def merge_inputs(into: dict, more: dict) -> dict:
    """``more`` over ``into``, maps merged key by key (``--input a.b=1
    --input a.c=2`` gives ``{"a": {"b": 1, "c": 2}}``)."""
    for k, v in more.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            into[k] = merge_inputs(dict(into[k]), v)
        else:
            into[k] = v
    return into


def parse_pairs(items: tuple[str, ...], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"{what} {item!r} must be KEY=VALUE")
        k, v = item.split("=", 1)
        out[k] = v
    return out
