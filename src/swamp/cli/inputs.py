"""Collecting inputs from --input-file, --stdin and --input (in that order,
later sources override earlier ones)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from swamp.errors import UsageError, ValidationError
from swamp.models.inputs import CliString


def input_options(f):
    f = click.option("--stdin", "stdin_input", is_flag=True,
                     help="Read one JSON or YAML map of inputs from stdin.")(f)
    f = click.option("--input-file", type=click.Path(dir_okay=False),
                     help="A YAML or JSON file holding a map of inputs.")(f)
    f = click.option("--input", "input_", multiple=True, metavar="KEY=VALUE|JSON",
                     help="An input; KEY=@FILE reads the value from a file ('@@' for a literal '@').")(f)
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
    values: dict = {}
    if input_file:
        try:
            text = Path(input_file).read_text()
        except OSError as e:
            raise ValidationError(f"cannot read --input-file {input_file}: {e.strerror}") from None
        values.update(_load_map(text, input_file))
    if stdin_input:
        values.update(_load_map(sys.stdin.read(), "<stdin>"))
    for item in input_:
        values.update(parse_input(item))
    return values


def parse_input(item: str) -> dict:
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
    key, value = item.split("=", 1)
    if not key:
        raise UsageError(f"--input {item!r} has an empty key")
    if value.startswith("@@"):
        value = value[1:]
    elif value.startswith("@"):
        try:
            value = Path(value[1:]).read_text()
        except OSError as e:
            # Like an unreadable --input-file: the command line was fine, its input was not.
            raise ValidationError(f"--input {key}: cannot read {value[1:]}: {e.strerror}") from None
    return {key: CliString(value)}


def parse_pairs(items: tuple[str, ...], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"{what} {item!r} must be KEY=VALUE")
        k, v = item.split("=", 1)
        out[k] = v
    return out
