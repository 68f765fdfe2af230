"""How versioned data syncs (read by the datastore's sync engine; see
``swamp.datastore.sync.rules``). Plain data, and data's version scheme
as a value (``renumber.py``: a small module, ~0.3 ms).

``data/<type...>/<modelId>/<name>/<version>/...``: a version directory is
written once, under the model's lease, so a conflict on it is a bug (the
second publisher is refused). Its content file ``raw`` is what a lazily
hydrated cache fetches on first read. A version of ours that was never
published, whose number a peer published first (our push failed meanwhile),
is renumbered to the next free number (``renumber.py``)."""

from swamp.data.renumber import VERSIONS

SYNC_RULES = {
    "immutable": ["data/*/*/**/{int}/**/*"],
    "lazy": ["data/*/*/**/{int}/**/raw"],
    "renumber": VERSIONS,
}
