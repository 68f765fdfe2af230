"""How versioned data syncs (read by the datastore's sync engine; see
``swamp.datastore.sync.rules``). Plain data: importing it costs nothing.

``data/<type...>/<modelId>/<name>/<version>/...``: a version directory is
written once, under the model's lease, so a conflict on it is a bug (the
second publisher is refused). Its content file ``raw`` is what a lazily
hydrated cache fetches on first read."""

SYNC_RULES = {
    "immutable": ["data/*/*/**/{int}/**/*"],
    "lazy": ["data/*/*/**/{int}/**/raw"],
}
