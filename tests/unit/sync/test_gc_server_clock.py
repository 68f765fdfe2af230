"""gc and the protocol's one clock (issue 24, N2 and N3).

The object store here is a local directory: its Last-Modified is the
file's mtime, set by the kernel, so it is a "server" clock that the
injected clock (``clock.set_clock``, a peer's wall clock) does not move.
Each test skews one gc runner by as much as S3 request signing still
accepts (15 minutes) or far more, and checks what a user would see: no
committed file ever loses its blob, and a fresh peer pulls it."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import gc as gcmod
from swamp.datastore.sync.clocks import STORE_MAX_SKEW_S
from swamp.errors import PreconditionFailed, SwampError
from swamp.util import clock
from swamp.util.digest import sha256_hex

from .conftest import files, write

DAY = 86400.0


@pytest.fixture
def skew():
    """``skew(seconds)``: this process's wall clock (the gc runner's) runs
    that far from the store's."""
    real = time.time
    yield lambda seconds: clock.set_clock(lambda: real() + seconds)
    clock.set_clock(None)


@pytest.fixture
def remote(tmp_path) -> LocalDirObjectStore:
    return LocalDirObjectStore(tmp_path / "remote")


def _orphan(peer, data: bytes) -> str:
    """A blob left by a push killed before its commit; returns its key."""
    key = peer.layout.blob(sha256_hex(data))
    peer.store.put(key, data)
    return key


def _marks(store, peer) -> dict:
    return json.loads(store.get(peer.layout.gc_mark_key)[0])


class _SlowDelete:
    """Holds one gc's delete of ``key`` until ``go`` is set, as a gc with
    many blobs or a slow link reaches it late inside its window."""

    def __init__(self, store: LocalDirObjectStore, key: str) -> None:
        self.in_sweep, self.go = threading.Event(), threading.Event()
        real = store.delete

        def delete(k, **kw):
            if k == key:
                self.in_sweep.set()
                self.go.wait(30)
            return real(k, **kw)

        store.delete = delete


def _sweeping(make_peer, remote, tmp_path, key: str):
    """gc G1 publishes a sweep of ``key`` (marked a day ago) and is held in
    its delete; returns (the thread, its _SlowDelete, its result)."""
    g1_store = LocalDirObjectStore(tmp_path / "remote")
    slow = _SlowDelete(g1_store, key)
    g1 = make_peer("G1", store=g1_store)
    result: dict = {}
    thread = threading.Thread(target=lambda: result.update(g1.gc(1)))
    thread.start()
    assert slow.in_sweep.wait(30), "gc G1 never reached the delete"
    return thread, slow, result


def _age_marks(store, peer, seconds: float) -> None:
    doc = _marks(store, peer)
    doc["blobs"] = {sha: t - seconds for sha, t in doc["blobs"].items()}
    store.put(peer.layout.gc_mark_key, json.dumps(doc).encode())


@pytest.mark.parametrize("minutes", [12, STORE_MAX_SKEW_S / 60, -STORE_MAX_SKEW_S / 60])
def test_a_gc_whose_clock_is_off_leaves_another_gcs_live_sweep_alone(make_peer, remote, tmp_path, skew, minutes):
    """N2, the gc half: G1 is sweeping blob X. G2's clock is 12 or 15
    minutes ahead (or 15 behind): it refuses (gc_contended) instead of
    taking the sweep for a dead one, and the sweep record stays."""
    g2 = make_peer("G2", store=remote)
    write(g2, "files/seed", b"seed")
    g2.push()
    key = _orphan(g2, os.urandom(50_000))
    g2.gc(1)
    _age_marks(remote, g2, 25 * 3600)
    thread, slow, _ = _sweeping(make_peer, remote, tmp_path, key)
    try:
        skew(minutes * 60)
        with pytest.raises(SwampError) as err:
            g2.gc(1)
        assert err.value.code == "gc_contended"
        clock.set_clock(None)
        assert _marks(remote, g2)["sweep"]["blobs"] == [key.rsplit("/", 1)[-1]]
    finally:
        slow.go.set()
        thread.join()
    assert "sweep" not in _marks(remote, g2)


def test_a_push_reusing_a_blob_a_skewed_gc_saw_is_never_left_without_it(make_peer, remote, tmp_path, skew,
                                                                        monkeypatch):
    """N2 end to end (repro gc_sweep_record_clock.py): G1 sweeps X; G2, 12
    minutes ahead, runs meanwhile; P commits a file of X's content (its
    upload answers 412: already there) while G1's delete of X is still
    coming. P's commit must not reference a missing blob: a fresh peer
    pulls the file and verify finds nothing wrong."""
    monkeypatch.setattr(gcmod, "SWEEP_WINDOW_S", 1.0)
    monkeypatch.setattr(gcmod, "SWEEP_MARGIN_S", 0.5)
    g2, p = make_peer("G2", store=remote), make_peer("P", store=remote)
    write(g2, "files/seed", b"seed")
    g2.push()
    big = os.urandom(200_000)
    key = _orphan(g2, big)
    g2.gc(1)
    _age_marks(remote, g2, 25 * 3600)
    thread, slow, result = _sweeping(make_peer, remote, tmp_path, key)
    try:
        skew(12 * 60)
        with pytest.raises(SwampError):
            g2.gc(1)
        clock.set_clock(None)

        class _Sleep:  # P waits out the sweep: G1's delete lands meanwhile
            @staticmethod
            def sleep(_seconds):
                slow.go.set()
                thread.join()

            monotonic = staticmethod(time.monotonic)

        monkeypatch.setattr(gcmod, "time", _Sleep)
        p.pull()
        write(p, "files/big", big)
        p.push()
    finally:
        slow.go.set()
        thread.join()
    assert result["blobsDeleted"] == 1
    assert g2.verify()["ok"], g2.verify()
    r = make_peer("R", store=remote)
    r.pull()
    assert files(r)["files/big"] == big


class _LosesBlobAfter412(MemoryObjectStore):
    """A create-only upload of ``key`` answers 412, and the blob is then
    deleted: what a sweep whose record a faulty peer erased does."""

    key = ""

    def put(self, key, data, *, if_none_match=False, if_match=None):
        try:
            return super().put(key, data, if_none_match=if_none_match, if_match=if_match)
        except PreconditionFailed:
            if key == self.key:
                self.delete(key)
            raise


def test_a_push_never_trusts_a_marked_blob_it_has_not_seen_exist(make_peer):
    """N2, the push half: X is marked in gc/mark.json, and gone by the time
    the push protects it. Removing its mark is not enough: the push checks
    X exists after protecting it, uploads it again, and its commit holds."""
    store = _LosesBlobAfter412()
    a, p = make_peer("A", store=store), make_peer("P", store=store)
    write(a, "files/seed", b"seed")
    a.push()
    big = os.urandom(200_000)
    store.key = _orphan(a, big)
    a.gc(30)  # marks X
    assert sha256_hex(big) in _marks(store, a)["blobs"]
    p.pull()
    write(p, "files/big", big)
    p.push()
    assert a.verify()["ok"], a.verify()
    r = make_peer("R", store=store)
    r.pull()
    assert files(r)["files/big"] == big


@pytest.mark.parametrize("marking, sweeping", [(0, 25 * 3600), (-25 * 3600, 0), (-25 * 3600, 25 * 3600)],
                         ids=["sweeper-25h-ahead", "marker-25h-behind", "both"])
def test_the_blob_grace_is_counted_on_the_servers_clock(make_peer, remote, skew, marking, sweeping):
    """N3 (repro gc_grace_local_clock.py): a blob marked moments ago is not
    swept by a gc whose clock is a day ahead, nor after a mark made by one a
    day behind: the grace (24 h) is measured on the store's clock."""
    g = make_peer("G", store=remote)
    write(g, "files/seed", b"seed")
    g.push()
    key = _orphan(g, os.urandom(50_000))
    skew(marking)
    assert g.gc(1)["blobsMarked"] == 1
    skew(sweeping)
    assert g.gc(1)["blobsDeleted"] == 0
    assert remote.head(key) is not None
    clock.set_clock(None)
    assert g.gc(1, grace_s=0)["blobsDeleted"] == 1  # and a grace that is over still sweeps


def test_marks_an_older_gc_stamped_with_its_own_clock_start_their_grace_again(make_peer, remote):
    """A marks document from before marks were on the server's clock holds
    runners' wall-clock times: they are not trusted, the grace restarts."""
    g = make_peer("G", store=remote)
    write(g, "files/seed", b"seed")
    g.push()
    data = os.urandom(50_000)
    key = _orphan(g, data)
    legacy = {"time": time.time(), "blobs": {sha256_hex(data): time.time() - 3 * DAY}}
    remote.put(g.layout.gc_mark_key, json.dumps(legacy).encode())
    assert g.gc(1)["blobsDeleted"] == 0 and remote.head(key) is not None
    doc = _marks(remote, g)
    assert doc["clock"] == "server" and doc["blobs"][sha256_hex(data)] > time.time() - 3600


@pytest.mark.parametrize("age_min, live", [(20, True), (60, False)])
def test_a_sweep_record_an_older_gc_stamped_allows_for_its_clock(make_peer, store, age_min, live):
    """A sweep record without serverStartedAt (an older swamp, its own
    clock) is stale only once older than its window, the stale allowance
    and twice the largest skew S3 accepts."""
    a = make_peer("A")
    write(a, "files/seed", b"seed")
    a.push()
    a.gc(30)
    doc = _marks(store, a)
    doc["sweep"] = {"id": "old", "startedAt": clock.now() - age_min * 60, "windowS": 60, "blobs": []}
    store.put(a.layout.gc_mark_key, json.dumps(doc).encode())
    if live:
        with pytest.raises(SwampError) as err:
            a.gc(30)
        assert err.value.code == "gc_contended"
    else:
        a.gc(30)
        assert "sweep" not in _marks(store, a)
