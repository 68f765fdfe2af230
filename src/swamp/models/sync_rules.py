"""How model outputs sync (see ``swamp.datastore.sync.rules``). Plain data.

An output record (and its log) is written once by the run that made it."""

SYNC_RULES = {
    "immutable": ["outputs/**"],
}
