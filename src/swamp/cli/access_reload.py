"""``swamp access reload``: read the grants and tokens again. Registered on
the ``access`` group at the end of cli/access.py."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit
from swamp.cli.remote_handlers import runs_on_server


def _text(doc: dict, where: str) -> str:
    files = ", ".join(doc["files"]) or "no grants file"
    return (f"{where}: {doc['grants']} grant(s) from {files}; {doc['tokens']} token(s) "
            f"({doc['revoked']} revoked)")


@click.command("reload")
@global_options
@click.pass_obj
def reload(state: CliState):
    """Read grants/*.yaml and the tokens again. With --server, the server does
    it now (it also does by itself when the files change; needs admin);
    without, checks them here as a server would load them, and fails on a
    broken grants file.

    Example: swamp access reload --server https://swamp.example.com --token admin.SECRET"""
    from swamp.app.enforced_access import GrantSet, TokenStore

    repo = state.repo()
    doc = {**GrantSet(repo).reload(), **TokenStore(repo).reload()}
    emit(state, doc, _text(doc, "checked"))


@runs_on_server("access reload")
def remote_reload(client, state, p: dict) -> None:
    _, doc = client.call("POST", "/access/reload", {})
    emit(state, doc, _text(doc, "reloaded on the server"))
