"""The body of `swamp data get`, without click: the click command
(swamp.cli.data) and the fast lane (swamp.cli.fast_lane) both call `run`."""

from __future__ import annotations

import json

from swamp.cli.output import emit, human_size, say
from swamp.cli.state import CliState


def run(state: CliState, model: str, name: str, version: int | None = None, no_content: bool = False,
        workflow: str | None = None) -> None:
    """Show one version of MODEL's data NAME (text, or --json)."""
    from swamp.app import data as app_data

    show(state, app_data.get(state.repo(), model, name, version, content=not no_content, workflow=workflow))


def show(state: CliState, result: dict) -> None:
    """One data version as `data get` prints it (here or from a server)."""
    def human():
        say(f"{result['model']}/{result['name']} version {result['version']} "
            f"({result['kind']}, {human_size(result['size'])}, {result['createdAt']})")
        if "content" in result:
            c = result["content"]
            say(c if isinstance(c, str) else json.dumps(c, indent=2, sort_keys=True))

    emit(state, result, human)
