"""One record of held locks: the datastore's lock() re-entry and the sync
engine's fencing read the same one."""

from __future__ import annotations

import threading

import pytest

from swamp.datastore.cached import CachedDatastore
from swamp.datastore.filesystem import FilesystemDatastore
from swamp.errors import LockTimeoutError


def test_a_thread_takes_a_lock_it_holds_again_at_no_cost_and_others_wait(tmp_path):
    ds = FilesystemDatastore(tmp_path / "ds")
    with ds.lock("model/a/b") as outer:
        assert outer is not None
        with ds.lock("model/a/b") as inner:  # re-entered: no second hold
            assert inner is None
        assert ds.held.handles_here() == [outer]
        failed = []

        def other():
            try:
                with ds.lock("model/a/b", timeout_ms=100):
                    pass
            except LockTimeoutError:
                failed.append(True)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert failed == [True]  # another thread is not the holder
    assert ds.held.handles_here() == []


def test_the_cached_datastore_and_its_engine_share_the_record(make_peer, tmp_path):
    engine = make_peer("a")
    ds = CachedDatastore(engine.root, engine, kind="s3", location="s3://b", namespace="default")
    assert ds.held is engine.held
    with ds.lock("model/t/m") as lease:
        with ds.lock("model/t/m"):
            assert engine.fencing.held_here() == [lease]
        ds.write_bytes("data/t/m/n/1/raw", b"x")
        assert "data/t/m/n/1/raw" in engine.fencing.scope_of(lease).written
    assert engine.fencing.held_here() == []


def test_nothing_is_left_in_the_record_after_a_failure(tmp_path):
    ds = FilesystemDatastore(tmp_path / "ds")
    with pytest.raises(RuntimeError):
        with ds.lock("m"):
            raise RuntimeError("boom")
    assert ds.held.handles_here() == []
    with ds.lock("m", timeout_ms=100):
        pass
