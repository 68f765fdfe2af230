from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, say_diff


@click.group()
def repo():
    """Create and upgrade repositories.

    Example: swamp repo init my-infra"""


@repo.command("init")
@click.argument("path", required=False, default=".")
@click.option("--force", "-f", is_flag=True, help="Rewrite managed files that already exist.")
@click.option("-y", "--yes", is_flag=True,
              help="With --force: replace an AGENTS.md you edited without asking.")
@global_options
@click.pass_obj
def init(state: CliState, path: str, force: bool, yes: bool):
    """Create a swamp repository at PATH (default: here).

    Example: swamp repo init my-infra"""
    import sys

    from swamp.app.repo_setup import agents_difference, init_repo

    replace = yes
    diff = agents_difference(path) if force and not yes else None
    if diff and not state.json and sys.stdin.isatty():
        say("AGENTS.md differs from the one this swamp ships:")
        say_diff(diff)
        replace = click.confirm("Replace it with swamp's?", default=False)
    result = init_repo(path, force=force, replace_agents=replace)

    def human():
        say(f"Initialized swamp repository in {result['path']}")
        for p in result["created"]:
            say(f"  created {p}")
        for p in result["kept"]:
            say(f"  kept your {p} (it differs from swamp's; --force --yes replaces it)")

    emit(state, result, human)


@repo.command("upgrade")
@click.argument("path", required=False)
@click.option("--force", "-f", is_flag=True, help="Show the difference for each agent file you edited, and ask.")
@click.option("-y", "--yes", is_flag=True, help="Write swamp's part into agent files you edited, without asking.")
@global_options
@click.pass_obj
def upgrade(state: CliState, path: str | None, force: bool, yes: bool):
    """Bring a repository made by an older swamp up to this one: the
    directory layout, the managed .gitignore block, the version in
    .swamp.yaml, and the agents' instructions (AGENTS.md and the files
    'swamp agent setup' wrote), refreshed where you did not edit them.
    An edited one is kept unless you agree (--force shows the difference;
    --yes for scripts).

    Example: swamp repo upgrade --force"""
    from swamp.cli.agent import consent, render
    from swamp.app.repo_setup import plan_upgrade, upgrade_repo
    from swamp.app.repository import repo_root

    root = repo_root(path or state.repo_dir)
    changes = plan_upgrade(root)
    ok, diffs = consent(state, changes, force, yes)
    result = upgrade_repo(root, changes, ok)
    if diffs:
        result["diffs"] = diffs

    def human():
        v = result["swampVersion"]
        say(f"Upgraded {result['path']}" + (f" from swamp {v['from']} to {v['to']}" if v["from"] != v["to"] else ""))
        for line in result["migrated"]:
            say(f"  {line}")
        render(result, diffs)

    emit(state, result, human)
