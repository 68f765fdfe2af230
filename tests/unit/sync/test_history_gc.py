"""Retention (gc with mark-then-sweep), verify and log."""

from __future__ import annotations

import pytest

from swamp.datastore.sync.blobs import sha256_bytes
from swamp.util import clock
from swamp.repo.datastores import path_rules

from .conftest import delete, files, write


@pytest.fixture
def make_peer(make_peer):
    """These tests are about blobs: nothing travels inline in the records."""
    return lambda name, **kw: make_peer(name, **{"inline_max": 0, **kw})


@pytest.fixture
def future():
    """Move the engine's clock forward (the memory store keeps real time)."""
    import time

    offset = [0.0]
    clock.set_clock(lambda: time.time() + offset[0])
    yield lambda seconds: offset.__setitem__(0, offset[0] + seconds)
    clock.set_clock(None)


def _keys(store, part):
    return sorted(k for k in store._objects if f"/{part}/" in k)


def test_gc_trims_old_log_and_sweeps_blobs_after_grace(make_peer, store, future):
    a = make_peer("a", checkpoint_every=5)
    lagging = make_peer("lagging")
    write(a, "files/doomed", b"only in old commits")
    for i in range(12):
        if i == 1:
            lagging.pull()
        if i == 2:
            delete(a, "files/doomed")
        write(a, f"files/f{i % 3}", f"v{i}".encode())
        a.push()
    doomed = sha256_bytes(b"only in old commits")
    future(40 * 86400)
    report = a.gc(retention_days=30, grace_s=3600)
    # the commit at the newest checkpoint (10) stays: the log is never emptied
    assert report["commitsDeleted"] == 9 and report["checkpointsDeleted"] == 1 and report["blobsDeleted"] == 0
    assert _keys(store, "log") == [f"default/log/{seq:020d}.json" for seq in (10, 11, 12)]
    assert _keys(store, "checkpoints") == ["default/checkpoints/00000000000000000010.json.gz"]
    assert a.gc(retention_days=30, grace_s=3600)["blobsDeleted"] == 0  # marked, but not for long enough
    future(2 * 3600)
    swept = a.gc(retention_days=30, grace_s=3600)
    assert swept["blobsDeleted"] >= 1 and f"default/blobs/{doomed[:2]}/{doomed}" not in store._objects
    assert a.verify()["ok"]
    # a newcomer and a peer left behind by the trim both converge
    fresh = make_peer("fresh")
    fresh.pull()
    lagging.sync()
    assert files(fresh) == files(lagging) == files(a)
    assert "files/doomed" not in files(fresh)


def test_a_marked_blob_that_a_push_reuses_is_not_swept(make_peer, store, future):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/x", b"content")
    a.push()
    delete(a, "files/x")
    a.push()
    future(40 * 86400)
    a.gc(retention_days=30, grace_s=3600)  # nothing is trimmed (no checkpoint), blob still referenced
    write(b, "files/y", b"content")  # same bytes: its upload will answer 412 "already there"
    b.sync()
    future(2 * 3600)
    a.gc(retention_days=30, grace_s=3600)
    assert a.verify()["ok"]
    c = make_peer("c")
    c.pull()
    assert files(c) == {"files/y": b"content"}


def test_verify_finds_corrupt_blobs_and_gaps(make_peer, store):
    a = make_peer("a")
    for i in range(3):
        write(a, f"files/f{i}", f"v{i}".encode())
        a.push()
    assert a.verify() == {"ok": True, "commits": 3, "checkpoints": 0, "blobs": 3, "inline": 0, "errors": []}
    sha = sha256_bytes(b"v0")
    store.put(f"default/blobs/{sha[:2]}/{sha}", b"garbage")
    store.delete("default/log/00000000000000000002.json")
    report = a.verify()
    assert not report["ok"]
    assert any("gap" in e for e in report["errors"]) and any("does not match" in e for e in report["errors"])


def test_log_is_the_history_newest_first(make_peer):
    a = make_peer("a")
    write(a, "files/f", b"1")
    a.push("model method run")
    delete(a, "files/f")
    a.push("data delete")
    entries = a.log()
    assert [(e["seq"], e["command"], e["writer"]["peer"]) for e in entries] == [
        (2, "data delete", "a"), (1, "model method run", "a")]
    assert a.log(limit=1)[0]["changes"] == [{"path": "files/f", "op": "delete", "sha256": None, "size": 0}]


# ------------------------------------------------- gc racing pushes (gc.py)
def _reused_blob_setup(make_peer, future):
    """Content only an old, trimmed commit referenced: unreferenced, marked.
    Peer b has pulled everything."""
    a = make_peer("a", checkpoint_every=1)
    b = make_peer("b")
    write(a, "files/p", b"content that comes back")
    a.push()
    write(a, "files/p", b"newer")
    a.push()
    b.pull()
    future(40 * 86400)
    a.gc(30, grace_s=0)
    return a, b, sha256_bytes(b"content that comes back")


def test_a_push_waits_out_a_sweep_that_names_a_blob_it_found_stored(make_peer, store, future, monkeypatch):
    """The gc has published its sweep and is deleting when a push finds the
    blob still there (412): the push waits out the sweep's window, finds it
    gone, and uploads it again before it commits."""
    import threading
    import time

    from swamp.datastore.objectstore.memory import MemoryObjectStore
    from swamp.datastore.sync import gc as gcmod

    monkeypatch.setattr(gcmod, "SWEEP_WINDOW_S", 1.0)
    monkeypatch.setattr(gcmod, "SWEEP_MARGIN_S", 0.2)

    class SlowDeletes(MemoryObjectStore):
        def __init__(self, inner):
            self.__dict__.update(inner.__dict__)

        def delete(self, key, *, if_match=None):
            if "/blobs/" in key:
                time.sleep(0.4)
            return super().delete(key, if_match=if_match)

    a, b, sha = _reused_blob_setup(make_peer, future)
    blob = f"default/blobs/{sha[:2]}/{sha}"
    sweeper = make_peer("sweeper", store=SlowDeletes(store))
    t = threading.Thread(target=sweeper.gc, args=(30,), kwargs={"grace_s": 0})
    t.start()
    try:
        deadline = time.monotonic() + 5
        while not _sweeping(store):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert blob in store._objects  # still there: the push's upload answers 412
        write(b, "files/q", b"content that comes back")
        started = time.monotonic()
        b.push()
        assert time.monotonic() - started >= 1.0  # waited out the window
    finally:
        t.join()
    assert blob in store._objects and a.verify()["ok"]
    c = make_peer("c")
    c.pull()
    assert files(c) == {"files/p": b"newer", "files/q": b"content that comes back"}


def _sweeping(store) -> bool:
    import json

    try:
        raw, _ = store.get("default/gc/mark.json")
    except Exception:
        return False
    return bool(json.loads(raw).get("sweep"))


def test_a_gc_that_read_the_marks_before_a_push_unmarked_its_blob_decides_again(make_peer, store, future,
                                                                                monkeypatch):
    from swamp.datastore.sync import gc as gcmod

    a, b, sha = _reused_blob_setup(make_peer, future)
    write(b, "files/q", b"content that comes back")
    real = gcmod._read_marks
    calls = []

    def read_then_push(st, layout):
        got = real(st, layout)
        if not calls:  # the gc's read: the push (and its protect) lands right after it
            calls.append(1)
            b.push()
        return got

    monkeypatch.setattr(gcmod, "_read_marks", read_then_push)
    report = a.gc(30, grace_s=0)
    assert report["blobsDeleted"] == 0 and f"default/blobs/{sha[:2]}/{sha}" in store._objects
    c = make_peer("c")
    c.pull()
    assert files(c) == {"files/p": b"newer", "files/q": b"content that comes back"}


def test_a_live_sweep_makes_another_gc_wait_and_a_stale_one_does_not(make_peer, store, future):
    import json

    from swamp.datastore.sync.gc import STALE_SWEEP_S, SWEEP_WINDOW_S
    from swamp.errors import SwampError

    a, _b, _sha = _reused_blob_setup(make_peer, future)
    key = "default/gc/mark.json"
    doc = json.loads(store.get(key)[0])
    doc["sweep"] = {"id": "killed", "serverStartedAt": clock.now(), "windowS": SWEEP_WINDOW_S, "blobs": []}
    store.put(key, json.dumps(doc).encode())
    with pytest.raises(SwampError) as err:
        a.gc(30, grace_s=0)
    assert err.value.code == "gc_contended"
    future(SWEEP_WINDOW_S + STALE_SWEEP_S + 1)
    assert a.gc(30, grace_s=0)["blobsDeleted"] == 1
    assert "sweep" not in json.loads(store.get(key)[0])


# ------------------------------------------- a trimmed log never swallows a commit
def test_a_newcomer_after_the_whole_log_was_trimmed_starts_from_the_checkpoint(make_peer, store, future):
    """gc keeps the commit at the newest checkpoint: the log is never empty
    once something was committed, so a new peer finds the checkpoint, and
    its first commit follows it instead of re-creating a trimmed seq."""
    a = make_peer("a", checkpoint_every=2)
    write(a, "files/p", b"1")
    a.push()
    write(a, "files/p", b"2")
    a.push()
    future(40 * 86400)
    assert a.gc(30, grace_s=3600)["commitsDeleted"] == 1
    assert _keys(store, "log") == ["default/log/00000000000000000002.json"]
    b = make_peer("b")
    b.pull()
    assert files(b) == {"files/p": b"2"} and b.state.head == 2
    write(b, "files/q", b"new")
    assert b.push().head == 3
    c = make_peer("c")
    c.pull()
    assert files(c) == {"files/p": b"2", "files/q": b"new"}


def test_a_push_from_a_peer_the_trim_left_behind_is_not_lost_in_the_gap(make_peer, store, future):
    """A peer whose head the gc trimmed pushes without pulling first: its
    commit must not land at a trimmed seq (create-only succeeds there, but no
    peer ever lists it), it rebases and commits at the tip (S1, S5)."""
    a = make_peer("a", checkpoint_every=3)
    lagging = make_peer("lagging")
    write(a, "files/p", b"1")
    a.push()
    lagging.pull()
    for i in range(2, 5):
        write(a, "files/p", f"{i}".encode())
        a.push()
    future(40 * 86400)
    a.gc(30, grace_s=3600)
    assert _keys(store, "log")[0].endswith("/00000000000000000003.json")
    write(lagging, "files/mine", b"made while away")
    counts = make_peer_push(lagging)
    assert counts.head == 5
    c = make_peer("c")
    c.pull()
    assert files(c) == {"files/p": b"4", "files/mine": b"made while away"}


def make_peer_push(e):
    """A push-only sync (``datastore sync --push``) from a fresh process:
    no pull before it in this engine."""
    from swamp.datastore.sync import SyncEngine

    fresh = SyncEngine(e.store, e.root, rules=path_rules(), peer=e.peer, concurrency=2)
    try:
        return fresh.push()
    finally:
        fresh.close()
