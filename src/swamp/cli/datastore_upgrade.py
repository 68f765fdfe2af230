"""`swamp datastore upgrade` (registered on the `datastore` group by
cli/datastore.py)."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, say


@click.command("upgrade")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@global_options
@click.pass_obj
def upgrade(state: CliState, yes: bool):
    """Move a shared datastore of sync format 1 to this swamp's format (small contents inline); older swamps are refused by it afterwards.

    Example: swamp datastore upgrade -y"""
    from swamp.app.datastore_upgrade import upgrade as run

    confirm(state, yes, "Move the shared datastore to this swamp's sync format? Swamps older than this one "
                        "will be refused by it")
    result = run(state.repo())

    def human():
        if result["upgraded"]:
            say(f"upgraded the datastore from sync format {result['from']} to {result['to']}: small contents "
                "now travel inline, and swamps older than this one are refused by it")
        else:
            say(f"nothing to do: the datastore already uses sync format {result['to']}")
        met = result.get("sync", {}).get("conflicts") or []
        if met:
            say(f"its pull met {len(met)} conflict(s), kept aside: see 'swamp datastore conflicts'")

    emit(state, result, human)
