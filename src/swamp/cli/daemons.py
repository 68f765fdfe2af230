"""`swamp serve daemon enable|disable|status` and `swamp worker daemon
enable|disable|status` (the use cases: app/daemons.py). Each kind's
`enable` takes the options of the command its service runs and turns them
back into that command's arguments; the global --token is never one of
them (a unit holds no secret: --env-file names where secrets are)."""

from __future__ import annotations

from pathlib import Path

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say

env_file_option = click.option(
    "--env-file", metavar="FILE",
    help="An environment file (NAME=VALUE lines, mode 0600) the service reads: where secrets such as "
         "$SWAMP_WEBHOOK_<NAME>_SECRET go. The unit only names it.")
dry_run_option = click.option("--dry-run", is_flag=True, help="Print the unit; write and start nothing.")


def _root(state: CliState) -> Path:
    return state.repo().root


def group(kind: str, enable: click.Command) -> click.Group:
    """The `daemon` group of ``kind`` (serve, worker) with its ``enable``."""
    command = "swamp serve" if kind == "serve" else "swamp worker start"

    @click.group("daemon", help=f"Run '{command}' as a user service (a systemd user unit, a launchd agent on "
                                f"macOS): enable, disable, status.\n\nExample: swamp {kind} daemon status")
    def daemon():
        pass

    daemon.add_command(enable, "enable")

    @daemon.command("disable", help=f"Stop this repository's '{command}' service and remove its unit.\n\n"
                                    f"Example: swamp {kind} daemon disable")
    @global_options
    @click.pass_obj
    def disable(state: CliState):
        from swamp.app import daemons

        result = daemons.disable(kind, _root(state))
        emit(state, result, f"stopped {result['name']} and removed {result['unit']}" if result["removed"]
             else f"no {result['name']} installed ({result['unit']}): nothing to do")

    @daemon.command("status", help=f"Whether this repository's '{command}' service is installed, enabled and "
                                   f"running, and what it runs.\n\nExample: swamp {kind} daemon status --json")
    @global_options
    @click.pass_obj
    def status(state: CliState):
        from swamp.app import daemons

        result = daemons.status(kind, _root(state))

        def human():
            if not result["installed"]:
                say(f"{result['name']}: not installed (swamp {kind} daemon enable installs it)")
                return
            say(f"{result['name']}: {result['state']}, {'enabled' if result['enabled'] else 'not enabled'}")
            say(f"  unit: {result['unit']}")
            if result["command"]:
                say(f"  runs: {result['command']}")

        emit(state, result, human)

    return daemon


def finish_enable(state: CliState, kind: str, args: list[str], env_file: str | None, dry_run: bool) -> None:
    from swamp.app import daemons

    result = daemons.enable(kind, _root(state), args, env_file=env_file, dry_run=dry_run)

    def human():
        if dry_run:
            click.echo(result["text"], nl=False)
            return
        say(f"enabled {result['name']}: {result['unit']}")
        say(f"  'swamp {kind} daemon status' shows it; 'swamp {kind} daemon disable' removes it")

    emit(state, result, human)


def flags(pairs) -> list[str]:
    """Command-line arguments from (option, value) pairs: a value of None or
    False is left out, True is the bare flag, a list or tuple repeats the option."""
    out: list[str] = []
    for option, value in pairs:
        if value is None or value is False:
            continue
        if value is True:
            out.append(option)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [option, str(v)]
        else:
            out += [option, str(value)]
    return out
