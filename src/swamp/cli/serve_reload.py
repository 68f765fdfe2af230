"""``swamp serve reload --server URL``: a running server pulls, reads its
grants, tokens and groups again and brings its extensions up to what the
lockfile pins, without a restart (serve/reload.py). Registered on the
``serve`` group at the end of cli/serve.py; it runs on the server only
(registered in cli/remote_handlers.py)."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit
from swamp.cli.remote_handlers import runs_on_server


@click.command("reload")
@global_options
@click.pass_obj
def reload(state: CliState):
    """Have a running server take up new extensions, trust lists, grants and
    tokens now, without a restart (no request is dropped). Needs admin on
    serve:reload.

    Example: swamp serve reload --server http://127.0.0.1:9090"""
    from swamp.errors import UsageError

    raise UsageError("'swamp serve reload' asks a running server: give --server URL (or SWAMP_SERVE_URL)",
                     hint="to check the grants and tokens here, without a server: swamp access reload")


@runs_on_server("serve reload")
def remote_reload(client, state, p: dict) -> None:
    _, doc = client.call("POST", "/serve/reload", {})
    access, ext = doc["access"], doc["extensions"]

    def human():
        from swamp.cli.output import say

        say(f"reloaded: {access['grants']} grant(s), {access['tokens']} token(s) ({access['revoked']} revoked), "
            f"{access['groups']} group(s)")
        say(f"extensions: {len(ext['installed'])} installed now, {len(ext['alreadyInstalled'])} already, "
            f"{len(ext['removed'])} removed; {len(doc['trustedIndexes'])} trusted index(es)")

    emit(state, doc, human)
