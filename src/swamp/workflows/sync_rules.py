"""How workflow runs sync (see ``swamp.datastore.sync.rules``). Plain data.

A run record (and its logs) is rewritten as its run goes, but only by that
run, under the run's lease (``records.run_lock``): no two peers change it
at once, so a conflict on it is a bug and it is declared immutable (refused,
both kept), never merged or overwritten."""

SYNC_RULES = {
    "immutable": ["workflow-runs/**"],
}
