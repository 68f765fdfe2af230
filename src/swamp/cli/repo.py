from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say


@click.group()
def repo():
    """Create and upgrade repositories."""


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

    from swamp.repo.init import agents_difference, init_repo

    replace = yes
    diff = agents_difference(path) if force and not yes else None
    if diff and not state.json and sys.stdin.isatty():
        say("AGENTS.md differs from the one this swamp ships:")
        say(diff.rstrip("\n"))
        replace = click.confirm("Replace it with swamp's?", default=False)
    result = init_repo(path, force=force, replace_agents=replace)

    def human():
        say(f"Initialized swamp repository in {result['path']}")
        for p in result["created"]:
            say(f"  created {p}")
        for p in result["kept"]:
            say(f"  kept your {p} (it differs from swamp's; --force --yes replaces it)")

    emit(state, result, human)
