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
@global_options
@click.pass_obj
def init(state: CliState, path: str, force: bool):
    """Create a swamp repository at PATH (default: here)."""
    from swamp.repo.init import init_repo

    result = init_repo(path, force=force)

    def human():
        say(f"Initialized swamp repository in {result['path']}")
        for p in result["created"]:
            say(f"  created {p}")

    emit(state, result, human)
