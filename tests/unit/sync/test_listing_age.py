"""The head-is-current rule counts a listing from the moment its LIST was
made, not from when its pull finished applying: a pull that brought commits
downloaded their contents after its LIST, so the create that follows waits
for a fresh LIST. Without it, a remote emptied and set up again during the
download took the commit after a gap (tests/review/test_push_onto_replaced_remote.py
shows the push; these show a sync and an epoch record, and what it costs)."""

from __future__ import annotations

import os

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.lease import Lease
from swamp.errors import RemoteChangedError
from swamp.repo.datastores import path_rules

from .conftest import files, write

LEASE = "model/acme/thing/123"


class ResetDuringDownload(MemoryObjectStore):
    """The first blob fetched once ``then`` is set is answered, and then the
    remote is emptied and set up again by another peer (``then``)."""

    then = None

    def get(self, key):
        out = super().get(key)
        if "/blobs/" in key and self.then is not None:
            then, self.then = self.then, None
            for k in list(self._objects):
                self.delete(k)
            then()
        return out


@pytest.fixture
def peers(tmp_path):
    store = ResetDuringDownload()
    made = {n: SyncEngine(store, tmp_path / n, rules=path_rules(), peer=n, concurrency=2)
            for n in ("a", "b", "c", "fresh")}
    a, b, c = made["a"], made["b"], made["c"]
    write(a, "files/a", b"a")
    a.push()  # log/1
    b.pull()
    write(b, "files/big", os.urandom(100 << 10))  # a blob, not inline
    b.push()  # log/2: a's next pull downloads it

    def reset() -> None:
        write(c, "files/c", b"c")
        c.push()  # the emptied remote set up again: c's log/1

    store.then = reset
    yield store, made
    for e in made.values():
        e.close()


def _logs(store) -> list[str]:
    return sorted(k.rsplit("/", 1)[1] for k in store._objects if "/log/" in k)


def test_a_sync_whose_pull_brought_commits_lists_again_before_its_create(peers):
    store, p = peers
    write(p["a"], "files/d", b"d")  # inline: nothing to upload after the pull
    with pytest.raises(RemoteChangedError):
        p["a"].sync()
    assert _logs(store) == ["00000000000000000001.json"], "a committed after a gap"
    p["fresh"].pull()
    assert files(p["fresh"]) == {"files/c": b"c"}


def test_an_epoch_record_after_a_pull_that_brought_commits_lists_again_first(peers):
    store, p = peers
    Lease(store, p["b"].layout, LEASE, peer="b").acquire()  # held by b; a breaks it, which fences b's holding
    with pytest.raises(RemoteChangedError):
        p["a"].force_release_lease(LEASE)  # its epoch record follows a pull that downloads files/big
    assert _logs(store) == ["00000000000000000001.json"], "the epoch record landed after a gap"
    p["fresh"].pull()
    assert files(p["fresh"]) == {"files/c": b"c"}


def test_a_push_whose_pull_brought_commits_costs_one_more_list(tmp_path):
    store = MemoryObjectStore()
    a, b = (SyncEngine(store, tmp_path / n, rules=path_rules(), peer=n, concurrency=2) for n in ("a", "b"))
    try:
        write(a, "files/a", b"a")
        a.push()
        b.pull()
        write(a, "files/a2", b"a2")
        a.push()
        write(b, "files/b", b"b")  # inline
        counts = b.push()
        # LIST (shows a's log/2), GET of that record (its content inline:
        # nothing to download), LIST again (nothing new), the create
        assert counts.requests == 4
        write(b, "files/b2", b"b2")
        assert b.push().requests == 2  # LIST (nothing new), the create
    finally:
        a.close()
        b.close()
