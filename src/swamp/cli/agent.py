"""`swamp agent`: the instructions coding agents read in this repository
(AGENTS.md, and the files of the agents that read their own)."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, say_diff, table


@click.group()
def agent():
    """Instructions for coding agents (AGENTS.md, CLAUDE.md, ...).

    Example: swamp agent list"""


def consent(state: CliState, changes: list, force: bool, yes: bool) -> tuple[set[str], dict[str, str]]:
    """Which of the changes to ask about may go ahead: all with --yes; with
    --force, each one the user accepts after seeing its difference (on a
    terminal; otherwise the differences are returned to show). Without
    either, none."""
    import sys

    asked = [c for c in changes if c.action == "ask"]
    if yes:
        return {c.path for c in asked}, {}
    ok: set[str] = set()
    diffs: dict[str, str] = {}
    if not force:
        return ok, diffs
    interactive = not state.json and sys.stdin.isatty()
    for c in asked:
        if not interactive:
            diffs[c.path] = c.diff()
            continue
        if c.how == "replace":
            say(f"{c.path}: swamp's part was edited; the difference with swamp's:")
        else:
            say(f"{c.path} is yours; swamp's part would be added at its end:")
        say_diff(c.diff())
        question = f"Replace swamp's part of {c.path}?" if c.how == "replace" else f"Add swamp's part to {c.path}?"
        if click.confirm(question, default=False):
            ok.add(c.path)
    return ok, diffs


def render(result: dict, diffs: dict[str, str]) -> None:
    """The human report of agent setup and repo upgrade."""
    for key, verb in (("created", "created"), ("updated", "updated")):
        for p in result[key]:
            say(f"  {verb} {p}")
    for p in result["kept"]:
        say(f"  kept {p}: you edited it or it is yours (--force shows the difference, --yes writes swamp's part)")
    for p, d in sorted(diffs.items()):
        say(f"difference for {p}:")
        say_diff(d)
    if not (result["created"] or result["updated"] or result["kept"]):
        say("  every file is up to date")


def _ask_agents() -> list[str]:
    from swamp.app.repo_setup import AGENTS, check_agent_names

    say("No coding agent found here. Which do you use? " + ", ".join(sorted(AGENTS)) + ", or all")
    answer = click.prompt("Agents (comma-separated)", default="agents")
    return check_agent_names(a for a in answer.split(",") if a.strip())


@agent.command("setup")
@click.option("--agent", "names", multiple=True, metavar="NAME",
              help="An agent to write instructions for (repeatable; 'all' for every one). "
                   "Default: the agents found here, else ask.")
@click.option("--force", "-f", is_flag=True, help="Show the difference for each file you edited, and ask.")
@click.option("-y", "--yes", is_flag=True, help="Write swamp's part into files you edited, without asking.")
@global_options
@click.pass_obj
def setup(state: CliState, names: tuple[str, ...], force: bool, yes: bool):
    """Write the instructions your coding agents read: AGENTS.md, and
    CLAUDE.md, .cursor/rules/swamp.mdc, .github/copilot-instructions.md,
    GEMINI.md or .windsurf/rules/swamp.md for the agents that read their
    own (a short file pointing at AGENTS.md). A file you edited is kept
    unless you agree (--force shows the difference; --yes for scripts).

    Example: swamp agent setup --agent claude --agent cursor"""
    import sys

    from swamp.app import repo_setup
    from swamp.app.repository import repo_root

    root = repo_root(state.repo_dir)
    detected = False
    if names:
        chosen = repo_setup.check_agent_names(names)
    else:
        chosen = repo_setup.detect_agents(root)
        detected = bool(chosen)
        if not chosen:
            chosen = _ask_agents() if not state.json and sys.stdin.isatty() else ["agents"]
    changes = repo_setup.plan_agent_changes(root, chosen)
    ok, diffs = consent(state, changes, force, yes)
    result = repo_setup.apply_agent_changes(root, changes, ok)
    out = {"path": str(root), "agents": chosen, "detected": detected, **result,
           "files": [c.to_json() for c in changes]}
    if diffs:
        out["diffs"] = diffs

    def human():
        say(f"Instructions for {', '.join(repo_setup.AGENTS[n].title.split(' (')[0] for n in chosen)} in {root}")
        render(result, diffs)

    emit(state, out, human)


@agent.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """The agents swamp writes instructions for: the file each reads,
    whether it was found here, and whether swamp's part is in its file.

    Example: swamp agent list --json"""
    from swamp.app.repo_setup import list_agents
    from swamp.app.repository import repo_root

    rows = list_agents(repo_root(state.repo_dir))
    emit(state, rows, lambda: table(rows, ["name", "file", "detected", "written", "title"]))


@agent.command("rm")
@click.argument("name")
@click.option("-y", "--yes", "-f", "--force", "yes", is_flag=True,
              help="Also remove swamp's part when you edited it (your edit goes with it).")
@global_options
@click.pass_obj
def rm(state: CliState, name: str, yes: bool):
    """Take swamp's part out of NAME's own file (CLAUDE.md, ...): what you
    wrote around it stays, and a file left empty is deleted. Exits 1 when
    you edited swamp's part, which then stays (-y removes it anyway).

    Example: swamp agent rm cursor"""
    import sys

    from swamp.app.repo_setup import apply_agent_removal, plan_agent_removal
    from swamp.app.repository import repo_root

    root = repo_root(state.repo_dir)
    change = plan_agent_removal(root, name)
    consent = yes
    if change["action"] == "ask" and not yes and not state.json and sys.stdin.isatty():
        consent = click.confirm(f"You edited swamp's part of {change['path']}; remove it anyway?", default=False)
    result = apply_agent_removal(root, change, consent)
    if result["result"] == "kept":
        from swamp.errors import ConflictError

        raise ConflictError(f"you edited swamp's part of {result['path']}: kept it",
                            hint=f"swamp agent rm {result['name']} -y removes it anyway (your edit goes with it)")
    words = {"deleted": f"deleted {result['path']}", "stripped": f"removed swamp's part of {result['path']}",
             "absent": f"{result['path']} has no part of swamp's: nothing to remove"}
    emit(state, result, words[result["result"]])
