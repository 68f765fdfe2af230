"""`swamp doctor`: the checks a support engineer runs first."""

from __future__ import annotations

import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say

AREAS = ("datastores", "extensions", "vaults", "workflows", "secrets", "install")


@click.command("doctor")
@click.argument("areas", nargs=-1, metavar="[datastores|extensions|vaults|workflows|secrets|install]...")
@click.option("--repair", is_flag=True, help="Fix what is safe to fix (and say what was done).")
@global_options
@click.pass_obj
def doctor(state: CliState, areas, repair):
    """Check the repository, its datastore, extensions, vaults, workflows,
    secrets and the installation; exit 1 when a check fails. Without AREAS,
    every area.

    Example: swamp doctor datastores --repair
    """
    from swamp.app.doctor import run
    from swamp.errors import RepoNotFoundError

    repo, repo_error = None, None
    try:
        repo = state.repo()
    except RepoNotFoundError as e:
        repo_error = e
    result = run(repo, list(areas), repair=repair, repo_error=repo_error)

    def human():
        from swamp.cli import colour

        on = colour.enabled()
        rows = result["checks"]
        width = max((len(c["check"]) for c in rows), default=0)
        for c in rows:
            label = colour.paint(f"{c['status'].upper():<4}", colour.status_role(c["status"]), on)  # padded, then painted
            say(f"{label}  {c['check']:<{width}}  {c['message']}")
            if c["repaired"]:
                say(f"{'':<4}  {'':<{width}}  repaired: {c['repaired']}")
            elif c["hint"] and c["status"] != "ok":
                say(f"{'':<4}  {'':<{width}}  hint: {c['hint']}")
        s = result["summary"]
        say(f"{s['ok']} ok, {s['warn']} warning(s), {s['fail']} failed")

    emit(state, result, human)
    if not result["ok"]:
        sys.exit(1)
