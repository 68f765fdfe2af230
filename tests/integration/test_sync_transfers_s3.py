"""Large-ish files through the engine on SeaweedFS: files of a few MiB are
read whole once and sent from a memory map (a read-only view the retry
layer and obstore take as it is), a file above WHOLE_MAX streams, and a
pull brings each one back with its hash checked, fsynced, in place."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.transfers import SMALL_FILE, WHOLE_MAX
from swamp.repo.datastores import path_rules
from swamp.util.atomic import TMP_PREFIX, atomic_write

pytestmark = pytest.mark.s3


def test_mid_size_and_streamed_files_go_both_ways(seaweedfs, tmp_path: Path) -> None:
    prefix = seaweedfs.new_prefix()

    def peer(name: str) -> SyncEngine:
        return SyncEngine(RetryingObjectStore(seaweedfs.store(prefix)), tmp_path / name, rules=path_rules(),
                          peer=name)

    contents = {f"files/mid-{i}": os.urandom(SMALL_FILE * (i + 2)) for i in range(10)}
    contents["files/big"] = os.urandom(WHOLE_MAX + 1)  # streamed (multipart on S3)
    contents["files/same"] = contents["files/mid-3"]  # one blob for two paths
    with peer("a") as a, peer("b") as b:
        for rel, data in contents.items():
            a.mark_dirty(rel)
            atomic_write(a.root / rel, data)
        counts = a.push("seed")
        assert counts.filesPushed == len(contents)
        assert counts.bytesPushed == sum(len(d) for rel, d in contents.items() if rel != "files/same")

        counts = b.pull()
        assert counts.filesPulled == len(contents)
        for rel, data in contents.items():
            got = (b.root / rel).read_bytes()
            assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest(), rel
        assert not [n for _d, _s, fs in os.walk(b.root) for n in fs if n.startswith(TMP_PREFIX)]
        assert b.push(full_walk=True).requests == 0  # what it wrote is its base
        assert a.verify()["ok"]
