"""Pick the datastore a repository is configured for."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def open_datastore(repo: Repo, rules):
    """``rules`` (sync.rules.PathRules, or a function that returns them,
    called only for a shared datastore): how each path of a shared datastore
    syncs; the paths' owners declare them (see swamp.repo.datastores)."""
    cfg = repo.config.datastore
    env = os.environ.get("SWAMP_DATASTORE")
    if env and env.startswith("filesystem:"):
        from .filesystem import FilesystemDatastore

        return FilesystemDatastore(Path(env.split(":", 1)[1]))
    if cfg is None or cfg.type == "filesystem":
        from .filesystem import FilesystemDatastore

        path = Path(cfg.path) if cfg is not None and cfg.path else repo.local_dir
        if not path.is_absolute():
            path = repo.root / path
        return FilesystemDatastore(path)
    from .cached import CachedDatastore  # noqa: F401  (object-store datastores)

    ds = CachedDatastore.from_config(repo, cfg, rules() if callable(rules) else rules)
    ds.offline = repo.offline
    return ds
