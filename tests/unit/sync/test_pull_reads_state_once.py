"""A pull that finds nothing new (what every serve read on a shared
datastore makes) reads the cache's position (head, seen, the tip's ETag) in
one query, and still refuses a remote that is not the one it applied."""

from __future__ import annotations

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.state import SyncState
from swamp.errors import RemoteChangedError
from swamp.repo.datastores import path_rules

from .conftest import read, write


@pytest.fixture
def peers(tmp_path):
    store = MemoryObjectStore()
    a, b = (SyncEngine(store, tmp_path / n, rules=path_rules(), peer=n) for n in ("a", "b"))
    write(a, "files/x", b"1")
    a.push()
    b.pull()
    yield store, a, b
    a.close()
    b.close()


def _meta_queries(monkeypatch) -> list[str]:
    asked: list[str] = []
    real = SyncState._q

    def counting(self, sql, args=()):
        if "FROM meta" in sql:
            asked.append(sql)
        return real(self, sql, args)

    monkeypatch.setattr(SyncState, "_q", counting)
    return asked


def test_a_pull_that_finds_nothing_reads_the_position_once(peers, monkeypatch):
    _store, _a, b = peers
    asked = _meta_queries(monkeypatch)
    counts = b.pull()
    assert counts.head == 1
    # the position (head, seen, tip) once; the head the counts report once
    assert len(asked) <= 2, asked


def test_the_position_is_what_head_seen_and_tip_say(peers):
    _store, a, b = peers
    write(a, "files/x", b"2")
    a.push()
    b.pull()
    head, seen, tip_id, tip_etag = b.state.position()
    assert (head, seen, (tip_id, tip_etag)) == (b.state.head, b.state.seen, b.state.tip())
    assert head == 2 and tip_id is not None and tip_etag
    assert read(b, "files/x") == b"2"


def test_a_pull_from_one_position_read_still_refuses_a_replaced_remote(peers):
    store, a, b = peers
    for key in list(store._objects):  # the remote emptied and written again by another team
        store.delete(key)
    other = SyncEngine(store, a.root.parent / "other", rules=path_rules(), peer="other")
    write(other, "files/y", b"theirs")
    other.push()
    with pytest.raises(RemoteChangedError):
        b.pull()
    assert read(b, "files/y") is None
    other.close()
