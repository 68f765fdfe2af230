"""`swamp doctor`: the checks a support engineer runs first."""

from __future__ import annotations

import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say

AREAS = ("datastores", "extensions", "vaults", "workflows", "secrets", "install")


@click.command("doctor")
@click.argument("areas", nargs=-1, metavar="[datastores|extensions|vaults|workflows|secrets|install]...|audit")
@click.option("--repair", is_flag=True, help="Fix what is safe to fix (and say what was done).")
@click.option("--tool", metavar="TOOL", help="With 'audit': the AI tool to check (an agent of 'swamp agent list', "
                                             "or none). Default: the agents set up here.")
@global_options
@click.pass_obj
def doctor(state: CliState, areas, repair, tool):
    """Check the repository, its datastore, extensions, vaults, workflows,
    secrets and the installation; exit 1 when a check fails. Without AREAS,
    every area. 'swamp doctor audit' checks the audit logs and an AI tool's
    swamp instructions instead (app/doctor_audit.py).

    Example: swamp doctor datastores --repair

    Example: swamp doctor audit --tool claude --json
    """
    from swamp.app.doctor import run
    from swamp.errors import RepoNotFoundError

    if "audit" in areas or tool is not None:  # upstream's `doctor audit`: a check of its own
        from swamp.app import doctor_audit
        from swamp.errors import UsageError

        if tuple(areas) != ("audit",) or repair:
            raise UsageError("'swamp doctor audit' runs alone (no other area, no --repair; --tool goes with it)")
        result = doctor_audit.run(state.repo(), tool)
    else:
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
