"""How versioned data syncs (read by the datastore's sync engine; see
``swamp.datastore.sync.rules``). Plain data: importing it costs nothing.

``data/<type...>/<modelId>/<name>/<version>/...``: a version directory is
written once, under the model's lease, so a conflict on it is a bug (the
second publisher is refused). Its content file ``raw`` is what a lazily
hydrated cache fetches on first read. A version of ours that was never
published, whose number a peer published first (our push failed meanwhile),
is renumbered to the next free number (``renumber.py``)."""

SYNC_RULES = {
    "immutable": ["data/*/*/**/{int}/**/*"],
    "lazy": ["data/*/*/**/{int}/**/raw"],
    "renumber": "swamp.data.renumber:VERSIONS",
}
