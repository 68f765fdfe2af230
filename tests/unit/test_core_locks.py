"""The filesystem datastore's locks are leases on a local-directory object
store under .locks/: exclusion, heartbeat, stale takeover with fencing."""

from __future__ import annotations

import time

import pytest

from swamp.datastore.filesystem import FilesystemDatastore
from swamp.datastore.sync.lease import Lease, Watch
from swamp.errors import LeaseLostError, LockTimeoutError


def _lease(ds, name, **kw) -> Lease:
    store, layout = ds._lease_store()
    return Lease(store, layout, name, peer="test", **kw)


def test_a_held_lock_excludes_and_the_heartbeat_keeps_it_fresh(tmp_path):
    ds = FilesystemDatastore(tmp_path)
    with _lease(ds, "model/a/b", ttl_ms=300):
        # Well past the TTL: the heartbeat keeps it from looking stale.
        time.sleep(0.7)
        with pytest.raises(LockTimeoutError) as e:
            _lease(ds, "model/a/b", ttl_ms=300, timeout_ms=200).acquire()
        assert "model/a/b" in e.value.message and e.value.exit_code == 75
        assert [(s["name"], s["stale"]) for s in ds.lock_status()] == [("model/a/b", False)]
        # Another name is independent.
        with ds.lock("model/a/c", timeout_ms=200):
            pass
    with ds.lock("model/a/b", timeout_ms=200):
        pass
    assert ds.lock_status() == []


def test_a_stalled_holder_loses_its_lock_and_learns_it(tmp_path):
    ds = FilesystemDatastore(tmp_path)
    first = _lease(ds, "m", ttl_ms=200).acquire()
    first._stop.set()  # the holder stalls: no more heartbeats
    first._thread.join()
    second = _lease(ds, "m", ttl_ms=5000, timeout_ms=2000).acquire()
    try:
        assert first.renew() is False
        with pytest.raises(LeaseLostError):
            first.ensure_held()
        first.release()  # must not remove the new holder's lease
        assert [s["name"] for s in ds.lock_status()] == ["m"]
    finally:
        second.release()
    assert ds.lock_status() == []


def test_an_unreadable_lease_is_held_until_unchanged_for_a_whole_ttl(tmp_path):
    ds = FilesystemDatastore(tmp_path)
    store, layout = ds._lease_store()
    store.put(layout.lease("m"), b"{not json")
    now = [0.0]
    watch = Watch(lambda: now[0])

    def sleep(s: float) -> None:
        now[0] += s

    with pytest.raises(LockTimeoutError) as e:
        _lease(ds, "m", timeout_ms=150, watch=watch, sleep=sleep).acquire()
    assert "another peer" in e.value.message
    taker = _lease(ds, "m", timeout_ms=60_000, watch=watch, sleep=sleep).acquire()
    try:
        assert now[0] >= 30  # its holder's ttl is unknown: the default, watched on our own clock
    finally:
        taker.release()


def test_a_lock_taken_again_by_its_thread_is_one_hold(tmp_path):
    ds = FilesystemDatastore(tmp_path)
    with ds.lock("m") as outer:
        with ds.lock("m") as inner:
            assert inner is None and [s["name"] for s in ds.lock_status()] == ["m"]
        assert isinstance(outer, Lease)
    assert ds.lock_status() == []
