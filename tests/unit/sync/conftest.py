"""Peers for sync tests: several SyncEngines on separate cache directories
over one object store. Writes go through ``write``/``delete`` so they mark
the path dirty first, as the cached datastore does."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.util.atomic import atomic_write
from swamp.repo.datastores import path_rules


def write(e: SyncEngine, rel: str, data: bytes | str) -> None:
    e.mark_dirty(rel)
    atomic_write(e.root / rel, data)


def delete(e: SyncEngine, rel: str) -> None:
    e.mark_dirty(rel)
    (e.root / rel).unlink()


def read(e: SyncEngine, rel: str) -> bytes | None:
    p = e.root / rel
    return p.read_bytes() if p.exists() else None


def files(e: SyncEngine) -> dict[str, bytes]:
    """Every synced file of a cache (what a peer 'sees')."""
    from swamp.datastore.sync.localonly import is_synced

    return {rel: (e.root / rel).read_bytes() for rel in e.tree.walk() if is_synced(rel)}


@pytest.fixture
def store() -> MemoryObjectStore:
    return MemoryObjectStore()


@pytest.fixture
def make_peer(tmp_path: Path, store: MemoryObjectStore) -> Callable[..., SyncEngine]:
    made: list[SyncEngine] = []

    def make(name: str, **kw) -> SyncEngine:
        kw.setdefault("concurrency", 4)
        e = SyncEngine(kw.pop("store", store), tmp_path / name, rules=path_rules(), peer=name, **kw)
        made.append(e)
        return e

    yield make
    for e in made:
        e.close()
