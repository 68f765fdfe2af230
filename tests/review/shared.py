"""Repositories on a shared datastore for the review's regression tests: a
real CachedDatastore and SyncEngine over an in-memory object store (or one
that fails on purpose), built in this process so a test can stop at the
exact moment a race needs."""

from __future__ import annotations

from pathlib import Path

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.errors import TransientError


class SwitchableStore(MemoryObjectStore):
    """Creates of commit records fail while ``down`` is set, as on a server
    that stopped answering: a session's push fails after its body ran."""

    down = False

    def put(self, key, data, **kw):
        if self.down and key.split("/")[-2:-1] == ["log"]:
            raise TransientError(f"injected: {key} not written")
        return super().put(key, data, **kw)


def attach(repo, store, peer: str):
    """Point ``repo`` (a swamp.repo.context.Repo) at ``store`` as a shared
    datastore, its cache in ``.swamp/`` as `datastore setup` leaves it."""
    from swamp.datastore.cached import CachedDatastore
    from swamp.datastore.sync import SyncEngine
    from swamp.repo.datastores import path_rules

    engine = SyncEngine(store, repo.local_dir, rules=path_rules(), peer=peer, concurrency=2)
    repo.__dict__["datastore"] = CachedDatastore(repo.local_dir, engine, kind="s3", location="s3://review",
                                                 namespace="default")
    return repo


def shared_repo(path: Path, store, peer: str, workflows: dict[str, str] = {}):
    from swamp.repo.context import Repo
    from tests.helpers import init_repo, write_workflow

    init_repo(path)
    for name, body in workflows.items():
        write_workflow(path, name, body)
    return attach(Repo.open(path), store, peer)
