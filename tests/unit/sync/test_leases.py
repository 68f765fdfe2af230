"""Leases (SYNC.md "Leases") and version allocation under them (S3, S8)."""

from __future__ import annotations

import threading
import time

import pytest

from swamp.errors import LeaseLostError, LockTimeoutError

from .conftest import files, write


def test_acquire_release_status_and_force(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    with a.lease("model/acme/counter/m1", ttl_ms=5000):
        (st,) = b.lease_status()
        assert st["name"] == "model/acme/counter/m1" and st["peer"] == "a" and not st["stale"]
        assert set(st) >= {"holder", "host", "pid", "acquiredAt", "ttlMs"}
    assert b.lease_status() == []
    b_lease = b.lease("x", ttl_ms=5000, timeout_ms=0)
    with pytest.raises(LeaseLostError):
        with a.lease("x", ttl_ms=5000) as held:
            held._stop.set()  # no heartbeat to notice what follows
            assert b.force_release_lease("x") is True
            assert b.force_release_lease("x") is False
            b_lease.__enter__()
            assert held.renew() is False  # the next heartbeat finds it lost
    # a's release did not delete b's lease
    assert [s["peer"] for s in b.lease_status()] == ["b"]
    b_lease.__exit__(None, None, None)
    assert b.lease_status() == []


def test_timeout_names_the_holder_and_exits_75(make_peer):
    a, b = make_peer("a"), make_peer("b")
    with a.lease("model/t/m", ttl_ms=5000):
        started = time.monotonic()
        with pytest.raises(LockTimeoutError) as err:
            with b.lease("model/t/m", timeout_ms=150):
                pass
        assert time.monotonic() - started < 2
    assert err.value.exit_code == 75 and "peer a" in str(err.value) and "model/t/m" in str(err.value)


def test_heartbeat_keeps_a_lease_alive_past_its_ttl(make_peer):
    a, b = make_peer("a"), make_peer("b")
    with a.lease("m", ttl_ms=600):
        with pytest.raises(LockTimeoutError):
            with b.lease("m", timeout_ms=1800):  # three ttls
                pass


def test_a_stale_lease_is_taken_over_by_exactly_one_of_many(make_peer):
    dead = make_peer("dead")
    held = dead.lease("m", ttl_ms=200)
    lease = held.__enter__()
    lease._stop.set()  # the holder is "killed": no heartbeat, no release
    time.sleep(0.35)
    takers = [make_peer(f"t{i}") for i in range(6)]
    barrier = threading.Barrier(len(takers))
    won, lost = [], []

    def take(e):
        barrier.wait()
        try:
            with e.lease("m", ttl_ms=5000, timeout_ms=0):
                won.append(e.peer)
                time.sleep(0.2)
        except LockTimeoutError:
            lost.append(e.peer)

    threads = [threading.Thread(target=take, args=(e,)) for e in takers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 5


def test_a_lost_lease_publishes_nothing(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    with pytest.raises(LeaseLostError):
        with a.lease("model/t/m", ttl_ms=200) as lease:
            lease._stop.set()
            lease._thread.join()  # a stalls past its ttl...
            time.sleep(0.3)
            with b.lease("model/t/m", ttl_ms=5000):  # ...and b takes over
                write(a, "data/t/m/n/1/raw", b"from a")
                a.push()
    assert not any("/log/" in k for k in store._objects)
    assert files(b) == {}


def _latest(e, name_dir: str) -> int:
    d = e.root / name_dir
    return max((int(p.name) for p in d.iterdir() if p.name.isdigit()), default=0) if d.exists() else 0


def test_versions_allocated_under_the_lease_are_unique_and_monotonic(make_peer, store):
    name_dir = "data/acme-counter/m1/count"
    peers = [make_peer(f"p{i}") for i in range(3)]
    seen: dict[str, list[int]] = {e.peer: [] for e in peers}
    errors = []

    def work(e):
        try:
            for i in range(4):
                with e.lease("model/acme-counter/m1", ttl_ms=3000):
                    e.pull()
                    v = _latest(e, name_dir) + 1
                    seen[e.peer].append(v)
                    write(e, f"{name_dir}/{v}/raw", f"{e.peer}:{i}".encode())
                    write(e, f"{name_dir}/{v}/metadata.yaml", f"version: {v}\n".encode())
                    e.push("model method run")
                e.pull()
                seen[e.peer].append(_latest(e, name_dir))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(e,)) for e in peers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for e in peers:
        e.pull()
        assert seen[e.peer] == sorted(seen[e.peer]), "the highest version a peer sees went down"
    contents = {rel: data for rel, data in files(peers[0]).items() if rel.endswith("/raw")}
    assert sorted(contents) == sorted(f"{name_dir}/{v}/raw" for v in range(1, 13))
    assert len(set(contents.values())) == 12  # every version published once, by one writer
    assert files(peers[0]) == files(peers[1]) == files(peers[2])


HOLD_AND_WAIT = '''
import sys, time
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine

e = SyncEngine(LocalDirObjectStore(sys.argv[1]), sys.argv[2], peer="victim")
with e.lease("model/acme/x/1", ttl_ms=30000):
    print("held", flush=True)
    time.sleep(60)
'''


def test_a_lease_whose_holder_on_this_machine_was_killed_is_taken_at_once(tmp_path):
    """After kill -9 the same machine does not wait out its own dead lease:
    the body names host and pid, and a holder of this host whose pid is gone
    is stale at once (the rule of the filesystem lock files)."""
    import json
    import os
    import signal
    import subprocess
    import sys

    from swamp.datastore.objectstore.local import LocalDirObjectStore
    from swamp.datastore.sync import SyncEngine
    from swamp.datastore.sync.layout import Layout
    from tests.helpers import _env

    objects = tmp_path / "objects"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_WAIT, str(objects), str(tmp_path / "victim")],
                              stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        store = LocalDirObjectStore(objects)
        body = json.loads(store.get(Layout("default").lease("model/acme/x/1"))[0])
        assert body["pid"] == holder.pid and body["host"]
        e = SyncEngine(store, tmp_path / "next", peer="next")
        try:
            with pytest.raises(LockTimeoutError):  # alive: honoured
                with e.lease("model/acme/x/1", timeout_ms=300):
                    pass
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
            assert [s["stale"] for s in e.lease_status()] == [True]
            started = time.monotonic()
            with e.lease("model/acme/x/1", timeout_ms=5000):  # well within the 30 s ttl
                assert [s["peer"] for s in e.lease_status()] == ["next"]
            assert time.monotonic() - started < 5
        finally:
            e.close()
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_pid_on_another_host_still_waits_for_the_ttl(make_peer, store):
    import json

    from swamp.datastore.sync.layout import Layout

    dead = 2 ** 22 + 12345  # above pid_max defaults: no such process here
    store.put(Layout("default").lease("m"), json.dumps(
        {"holder": "x@elsewhere", "host": "elsewhere.invalid", "pid": dead, "nonce": "n", "ttlMs": 60000}).encode(),
        if_none_match=True)
    with pytest.raises(LockTimeoutError):
        with make_peer("a").lease("m", timeout_ms=200):
            pass
