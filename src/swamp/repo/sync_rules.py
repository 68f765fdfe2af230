"""How the shared settings sync (see ``swamp.datastore.sync.rules``). Plain
data.

``config/shared.json`` (``shared_config.PATH``) is changed by
read-modify-write from every peer: a map merged per key, so two peers
setting different keys both keep their change."""

SYNC_RULES = {
    "mergeable": {"config/shared.json": "json", "config/shared.yaml": "yaml"},
}
