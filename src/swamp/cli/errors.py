"""Turning exceptions into exit codes and messages. A SwampError is a user
error: message (and hint) on stderr, JSON in --json mode. Anything else is a
bug, and shows its traceback."""

from __future__ import annotations

import sys

import click

from swamp.cli.options import CliState
from swamp.errors import SwampError


def _json_mode(argv) -> bool:
    return "--json" in (argv if argv is not None else sys.argv[1:])


#: the running command's CliState (its --no-color and -q decide the colour of an error)
_STATE: CliState | None = None
_QUIET = False


def _colour_on() -> bool:
    from swamp.cli import colour

    if _QUIET:
        return False
    return colour.enabled(sys.stderr, _STATE if _STATE is not None else CliState())


def run_cli(cli: click.Group, argv=None) -> int:
    json_mode = _json_mode(argv)
    args = list(argv if argv is not None else sys.argv[1:])
    state = CliState()
    # So that an error raised before the options are parsed respects them too.
    state.color = "--no-color" not in args
    global _STATE, _QUIET
    _STATE, _QUIET = state, "-q" in args or "--quiet" in args
    try:
        cli.main(args=argv, prog_name="swamp", standalone_mode=False, obj=state)
        return 0
    except SystemExit as e:  # commands exit with a code (records on failure)
        return int(e.code or 0)
    except click.exceptions.Abort as e:
        # click turns Ctrl-C into Abort; a declined confirmation is one too.
        if isinstance(e.__cause__, KeyboardInterrupt):
            return _interrupted(json_mode)
        _report(SwampError("aborted", code="aborted"), json_mode)
        return 1
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.BadParameter as e:
        if not _names_a_missing_path(e):
            return _usage(e, json_mode)
        # The command line was well formed; the file or directory it names is not there (exit 1,
        # like an unreadable --input @file or --input-file).
        _report(SwampError(e.format_message(), code="not_found"), json_mode)
        return 1
    except click.UsageError as e:
        return _usage(e, json_mode)
    except click.ClickException as e:
        if json_mode:
            _echo_json({"error": e.format_message(), "code": "error"})
        else:
            e.show()
        return e.exit_code
    except SwampError as e:
        if json_mode and getattr(e, "value", None) is not None:
            from swamp.cli.output import to_json

            click.echo(to_json(e.value))  # the work done here, reported with "published": false
        _report(e, json_mode)
        return e.exit_code
    except KeyboardInterrupt:
        return _interrupted(json_mode)
    except BrokenPipeError:
        return 1


def _usage(e: click.UsageError, json_mode: bool) -> int:
    if json_mode:
        _echo_json({"error": e.format_message(), "code": "usage"})
    else:
        e.show()
    return 2


def _names_a_missing_path(e: click.BadParameter) -> bool:
    """A path option or argument whose file or directory is not there, or
    not what the command needs (click.Path checks the filesystem, never the
    spelling)."""
    return isinstance(getattr(e.param, "type", None), click.Path)


def _interrupted(json_mode: bool) -> int:
    _report(SwampError("interrupted", code="interrupted"), json_mode)
    return 130


def _echo_json(doc: dict) -> None:
    import json  # only on the error path: start-up time matters

    from swamp.vault.redact import redact_text

    click.echo(redact_text(json.dumps(doc)), err=True)


def _report(e: SwampError, json_mode: bool) -> None:
    from swamp.vault.redact import redact_text

    if json_mode:
        _echo_json(e.to_json())
        return
    from swamp.cli.colour import paint

    on = _colour_on()
    click.echo(paint("error:", "bad", on) + " " + redact_text(e.message), err=True)
    if e.hint:
        click.echo(paint("hint:", "dim", on) + " " + redact_text(e.hint), err=True)
