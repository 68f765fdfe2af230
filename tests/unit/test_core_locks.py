"""Lock files: exclusion, heartbeat, stale takeover with fencing."""

from __future__ import annotations

import json
import time

import pytest

from swamp.datastore.locks import FileLock, list_locks
from swamp.errors import LeaseLostError, LockTimeoutError


def test_a_held_lock_excludes_and_the_heartbeat_keeps_it_fresh(tmp_path):
    with FileLock(tmp_path, "model/a/b", ttl_ms=300):
        # Well past the TTL: the heartbeat keeps it from looking stale.
        time.sleep(0.7)
        with pytest.raises(LockTimeoutError) as e:
            FileLock(tmp_path, "model/a/b", ttl_ms=300, timeout_ms=200).acquire()
        assert "model/a/b" in e.value.message and e.value.exit_code == 75
        status = list_locks(tmp_path)
        assert [(s["name"], s["stale"]) for s in status] == [("model/a/b", False)]
        # Another name is independent.
        with FileLock(tmp_path, "model/a/c", timeout_ms=200):
            pass
    with FileLock(tmp_path, "model/a/b", timeout_ms=200):
        pass
    assert list_locks(tmp_path) == []


def test_a_stalled_holder_loses_its_lock_and_learns_it(tmp_path):
    first = FileLock(tmp_path, "m", ttl_ms=200).acquire()
    first._stop.set()  # the holder stalls: no more heartbeats
    first._thread.join()
    time.sleep(0.3)
    second = FileLock(tmp_path, "m", ttl_ms=5000, timeout_ms=1000).acquire()
    try:
        assert first.heartbeat() is False
        with pytest.raises(LeaseLostError):
            first.check()
        first.release()  # must not remove the new holder's lock
        info = json.loads(first.path.read_text())
        assert info["nonce"] == second.nonce
    finally:
        second.release()
    assert not second.path.exists()


def test_a_torn_lock_file_is_held_until_its_mtime_is_stale(tmp_path):
    lock = FileLock(tmp_path, "m", timeout_ms=150)
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    lock.path.write_text("{not json")
    with pytest.raises(LockTimeoutError) as e:
        lock.acquire()
    assert "another process" in e.value.message
    old = time.time() - 60
    import os

    os.utime(lock.path, (old, old))
    with FileLock(tmp_path, "m", timeout_ms=1000):
        pass
