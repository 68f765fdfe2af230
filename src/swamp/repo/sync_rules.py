"""How the shared settings sync (see ``swamp.datastore.sync.rules``). Plain
data.

``config/shared.json`` (``shared_config.PATH``) is changed by
read-modify-write from every peer: a map merged per key, so two peers
setting different keys both keep their change. The access documents
(``access_docs.py``: tokens, grants, groups) are maps keyed by name or id,
merged the same way."""

SYNC_RULES = {
    "mergeable": {"config/shared.json": "json", "config/shared.yaml": "yaml",
                  "access/tokens.json": "json", "access/grants.json": "json", "access/groups.json": "json"},
}
