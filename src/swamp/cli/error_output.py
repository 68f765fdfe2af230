"""Errors for a person or a script, without click: a SwampError as
``error: ...`` (and ``hint: ...``) on stderr, or, in --json mode, one JSON
error document there; Ctrl-C, a broken pipe and `sys.exit` as exit codes.
Secrets are redacted (swamp.vault.redact) from everything written.

`swamp.cli.errors.run_cli` (the click path) and `swamp.cli.fast_lane` (the
commands run without click) both render through here, so an error reads the
same, byte for byte, whichever path ran the command."""

from __future__ import annotations

import sys

from swamp.cli.echo import echo
from swamp.cli.state import CliState
from swamp.errors import SwampError

#: the running command's CliState (its --no-color and -q decide the colour of an error)
_STATE: CliState | None = None
_QUIET = False


def json_mode(argv) -> bool:
    return "--json" in (argv if argv is not None else sys.argv[1:])


def start(args: list, state: CliState | None = None) -> CliState:
    """The CliState errors are rendered by, from the raw arguments, so that an
    error raised before the options are parsed respects them too (``state``:
    one already parsed, the fast lane's)."""
    global _STATE, _QUIET
    if state is None:
        state = CliState()
        state.color = "--no-color" not in args
    _STATE, _QUIET = state, "-q" in args or "--quiet" in args
    return state


def _colour_on() -> bool:
    from swamp.cli import colour

    if _QUIET:
        return False
    return colour.enabled(sys.stderr, _STATE if _STATE is not None else CliState())


def swamp_error(e: SwampError, json_mode: bool) -> int:
    """A SwampError raised by a command: in --json mode the work it did
    first (``value``, on stdout), then the error; its exit code."""
    if json_mode and getattr(e, "value", None) is not None:
        from swamp.cli.output import to_json

        echo(to_json(e.value))  # the work done here, reported with "published": false
    report(e, json_mode)
    return e.exit_code


def interrupted(json_mode: bool) -> int:
    report(SwampError("interrupted", code="interrupted"), json_mode)
    return 130


def echo_json(doc: dict) -> None:
    import json  # only on the error path: start-up time matters

    from swamp.vault.redact import redact_text

    echo(redact_text(json.dumps(doc)), err=True)


def report(e: SwampError, json_mode: bool) -> None:
    from swamp.vault.redact import redact_text

    if json_mode:
        echo_json(e.to_json())
        return
    from swamp.cli.colour import paint

    on = _colour_on()
    problems = getattr(e, "problems", None) or []  # a document's schema errors (SchemaError): one a line
    if len(problems) > 1:
        source = getattr(e, "source", None)
        echo(paint("error:", "bad", on) + " " + redact_text(f"{source + ': ' if source else ''}"
                                                           f"{len(problems)} problems"), err=True)
        for p in problems:
            echo(redact_text(f"  {p['path']}: {p['message']}"), err=True)
    else:
        echo(paint("error:", "bad", on) + " " + redact_text(e.message), err=True)
    if e.hint:
        echo(paint("hint:", "dim", on) + " " + redact_text(e.hint), err=True)
