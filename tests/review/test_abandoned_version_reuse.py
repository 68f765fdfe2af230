"""Review (round after e212c4b): no version number is ever given out
twice (docs/sync.md S3), and a write cut short frees its number
(data/repository.py `abandon`, f909c63) on the premise that "no push
carried it".

Hole: pushing never waits for a lease, and another process on the same
checkout pushes whatever the journal names. The raw file of a version is
journaled and in place before its metadata is written; a push in that
moment publishes it. If the metadata write then fails (a full disk, Ctrl-C
while a large content is hashed), `abandon` deletes the directory and the
next write takes the same number again: one version number published twice
with different contents."""

from __future__ import annotations

import errno

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from tests.review.shared import attach

MODEL = "0c7a5e1e-4d3b-4f8e-9a55-1b2c3d4e5f60"


def test_a_version_number_published_once_is_never_given_out_again(tmp_path, monkeypatch):
    from swamp.data.repository import DataRepository
    from swamp.datastore.sync import commitlog
    from swamp.datastore.sync.layout import Layout
    from swamp.repo.context import Repo
    from tests.helpers import init_repo

    store = MemoryObjectStore()
    init_repo(tmp_path / "r")
    here = attach(Repo.open(tmp_path / "r"), store, "laptop")  # the process writing the data
    other = attach(Repo.open(tmp_path / "r"), store, "laptop")  # another process on the same checkout
    try:
        data = DataRepository(here.datastore)
        finish = DataRepository._finish
        pushed = []

        def disk_full_after_a_push(self, *args):
            if not pushed:
                pushed.append(other.datastore.sync())  # e.g. `swamp datastore sync` in another terminal
                raise OSError(errno.ENOSPC, "No space left on device")
            return finish(self, *args)

        monkeypatch.setattr(DataRepository, "_finish", disk_full_after_a_push)
        meta = {"id": "d1", "name": "report", "specName": "report", "kind": "file", "contentType": "text/plain",
                "lifetime": "infinite", "createdAt": "2026-11-30T12:00:00.000Z",
                "owner": {"definitionId": MODEL, "definitionName": "hello", "modelType": "command/shell"}}
        with pytest.raises(OSError):
            data.write("command/shell", MODEL, dict(meta), b"first attempt")
        second = data.write("command/shell", MODEL, dict(meta), b"second attempt")
        here.datastore.sync()

        puts: dict[str, set[str]] = {}
        layout = Layout("default")
        seqs = sorted(commitlog.list_from(store, layout, 0))
        for c in commitlog.fetch(store, layout, seqs, here.datastore.engine._pool):
            for ch in c.changes:
                if ch.op == "put" and ch.path.endswith("/raw"):
                    puts.setdefault(ch.path, set()).add(ch.sha256)
        assert puts, "nothing was published"
        # each version's content is published once: today version 1 twice
        assert all(len(shas) == 1 for shas in puts.values()), (second.meta.version, puts)
    finally:
        here.datastore.engine.close()
        other.datastore.engine.close()
