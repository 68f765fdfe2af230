"""Small contents inline in the commit record, against a real S3 server
(SeaweedFS): a step's small files cost the commit's PUT and nothing else,
a peer pulls them without a GET each, and they survive gc via checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.localonly import is_synced
from swamp.repo.datastores import path_rules
from swamp.util.atomic import atomic_write

pytestmark = pytest.mark.s3


def _write(e: SyncEngine, rel: str, data: bytes) -> None:
    e.mark_dirty(rel)
    atomic_write(e.root / rel, data)


def _files(e: SyncEngine) -> dict[str, bytes]:
    return {r: (e.root / r).read_bytes() for r in e.tree.walk() if is_synced(r)}


def test_small_files_inline_over_s3(seaweedfs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    prefix = seaweedfs.new_prefix()

    def peer(name: str, **kw) -> SyncEngine:  # type: ignore[no-untyped-def]
        return SyncEngine(RetryingObjectStore(seaweedfs.store(prefix)), tmp_path / name, rules=path_rules(),
                          peer=name, checkpoint_every=2, **kw)

    a, b = peer("a"), peer("b", hydration="lazy")
    try:
        a.init_remote()
        _write(a, "files/seed", b"seed")
        a.push("seed")
        for i in range(6):  # what a workflow step writes
            _write(a, f"data/acme-c/m1/out/{i + 1}/raw", f"value {i}\n".encode())
            _write(a, f"data/acme-c/m1/out/{i + 1}/metadata.yaml", f"version: {i + 1}\n".encode())
        step = a.push("step")
        assert step.filesPushed == 12
        assert step.requests <= 3  # the LIST before the create, the commit's PUT (+ the checkpoint at the mark)
        pulled = b.pull()
        assert pulled.filesPulled == 13 and _files(b) == _files(a)  # lazy, yet in hand: written at pull
        assert b.push(full_walk=True).requests == 0
        report = a.verify()
        assert report["ok"] and report["inline"] >= 13 and report["blobs"] == 0
    finally:
        a.close()
        b.close()
