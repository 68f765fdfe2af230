"""How the extension lockfile syncs (see ``swamp.datastore.sync.rules``).
Plain data.

``extensions/lockfile.json`` maps each installed extension to its pinned
version; peers install and remove extensions from stale caches, so it is
merged per key and an entry changed differently on two peers is a conflict
that names it. ``extensions/history/`` holds one object per change
(``history.py``), each written once: immutable."""

SYNC_RULES = {
    "mergeable": {"extensions/lockfile.json": "json"},
    "immutable": ["extensions/history/*.json"],
}
