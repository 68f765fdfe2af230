"""Turning exceptions into exit codes and messages. A SwampError is a user
error: message (and hint) on stderr, JSON in --json mode. Anything else is a
bug, and shows its traceback. What click reports (usage errors, aborts) is
turned into the same kind of message here; the rendering itself, shared
with the commands the fast lane runs without click, is
`swamp.cli.error_output`."""

from __future__ import annotations

import sys

import click

from swamp.cli.error_output import echo_json as _echo_json
from swamp.cli.error_output import interrupted as _interrupted
from swamp.cli.error_output import json_mode as _json_mode
from swamp.cli.error_output import report as _report
from swamp.cli.error_output import start, swamp_error
from swamp.errors import SwampError


def run_cli(cli: click.Group, argv=None) -> int:
    json_mode = _json_mode(argv)
    args = list(argv if argv is not None else sys.argv[1:])
    state = start(args)
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
        return swamp_error(e, json_mode)
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
