"""Rendering: one JSON document in --json mode, tables and lines otherwise.
Every string that leaves the process passes the secret redactor."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Sequence

import click

from swamp.cli.options import CliState


def to_json(data: Any) -> str:
    from swamp.vault.redact import redact_text

    return redact_text(json.dumps(data, indent=2, sort_keys=False, default=str))


def emit(state: CliState, data: Any, human: Callable[[], None] | str | None = None) -> None:
    if state.json:
        click.echo(to_json(data))
        return
    if state.quiet:
        return
    if callable(human):
        human()
    elif isinstance(human, str):
        say(human)
    else:
        click.echo(to_json(data))


def say(text: str, *, err: bool = False) -> None:
    from swamp.vault.redact import redact_text

    click.echo(redact_text(text), err=err)


def table(rows: Sequence[dict], columns: Sequence[str], headers: Sequence[str] | None = None) -> None:
    headers = list(headers or [c.upper() for c in columns])
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    say("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
    for row in cells:
        say("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def confirm(state: CliState, yes: bool, question: str) -> None:
    """Deletes need -y without a terminal; with one, ask."""
    if yes:
        return
    if state.json or not sys.stdin.isatty():
        from swamp.errors import UsageError

        raise UsageError(f"{question} (pass -y to confirm)")
    click.confirm(question, abort=True)


def emit_validation(state: CliState, result: dict, items: str) -> None:
    """A validation report ({"valid", items: [{"name", "valid", "errors"}]});
    exits 1 when anything is invalid (the report is still printed)."""

    def human():
        for entry in result[items]:
            say(f"{'ok     ' if entry['valid'] else 'INVALID'} {entry['name']}")
            for e in entry["errors"]:
                say(f"        {e}")
            for w in entry.get("warnings", []):
                say(f"        warning: {w}")

    emit(state, result, human)
    if not result["valid"]:
        sys.exit(1)


#: lines of a failed run's log shown without -v
FAILURE_TAIL = 5


def show_failure_log(state: CliState, log: str, command: str) -> None:
    """Where a failed run went wrong: the last lines of its log (all of it,
    the traceback included, with -v) and the command that shows the rest."""
    lines = log.rstrip("\n").splitlines()
    shown = lines if state.verbose else lines[-FAILURE_TAIL:]
    if shown:
        say("  log" + ("" if len(shown) == len(lines) else f" (last {len(shown)} of {len(lines)} lines; -v for all)")
            + ":")
        for line in shown:
            say(f"    {line}")
    say(f"  full log: {command}")


def open_in_editor(state: CliState, path, kind: str, name: str, *, managed: bool = False) -> None:
    """``swamp KIND edit NAME``: open ``path`` in $EDITOR (a terminal is
    needed; without one, say how to do it by hand; ``managed``: the file is
    in the datastore's config tier, which a hand edit must publish)."""
    if state.json or not sys.stdin.isatty():
        from swamp.errors import UsageError

        publish = " and 'swamp datastore config publish'" if managed else ""
        raise UsageError(f"{kind} edit needs a terminal",
                         hint=f"edit {path} with any editor, then run 'swamp {kind} validate {name}'{publish}")
    click.edit(filename=str(path))
