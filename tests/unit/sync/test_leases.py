"""Leases (SYNC.md "Leases") and version allocation under them (S3, S8)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from swamp.errors import LeaseLostError, LockTimeoutError

from .conftest import delete, files, read, write


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
    takers = [make_peer(f"t{i}") for i in range(6)]
    barrier = threading.Barrier(len(takers))
    won, lost = [], []

    def take(e):
        barrier.wait()
        try:
            # Each watches the dead lease unchanged for its 200 ms ttl, then
            # they race the takeover; the winner holds on until the others gave up.
            with e.lease("m", ttl_ms=5000, timeout_ms=1500):
                won.append(e.peer)
                deadline = time.monotonic() + 10
                while len(lost) < len(takers) - 1 and time.monotonic() < deadline:
                    time.sleep(0.02)
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
    # the log holds only b's epoch record fencing a's holding: nothing of a's
    records = [json.loads(store.get(k)[0]) for k in store._objects if "/log/" in k]
    assert [(r["changes"], r["fence"]["lease"]) for r in records] == [([], "model/t/m")]
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
from swamp.repo.datastores import path_rules

e = SyncEngine(LocalDirObjectStore(sys.argv[1]), sys.argv[2], rules=path_rules(), peer="victim")
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
    from swamp.repo.datastores import path_rules
    from tests.helpers import _env

    objects = tmp_path / "objects"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_WAIT, str(objects), str(tmp_path / "victim")],
                              stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        store = LocalDirObjectStore(objects)
        body = json.loads(store.get(Layout("default").lease("model/acme/x/1"))[0])
        assert body["pid"] == holder.pid and body["host"]
        e = SyncEngine(store, tmp_path / "next", rules=path_rules(), peer="next")
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


# ------------------------------------------- what was written under a lost lease
def _lose(lease, store) -> None:
    """Another peer takes the lease over behind our back; our next heartbeat
    (or check) finds it lost."""
    import json

    lease._stop.set()
    lease._thread.join()
    store.delete(lease.key)
    store.put(lease.key, json.dumps({"holder": "thief", "nonce": "x", "ttlMs": 60000}).encode())
    assert lease.renew() is False and lease.lost


def _lost_lease_dir(e) -> Path:
    (d,) = (e.root / ".sync" / "lost-lease").iterdir()
    return d


def test_what_was_written_under_a_lost_lease_is_quarantined_and_never_published(make_peer, store):
    """The design (engine.lease, Fencing.quarantine): the paths a thread marks dirty
    while it holds a lease are recorded against it. Once the lease is lost,
    each of them that differs from its base is moved, bytes intact, to the
    local-only .sync/lost-lease/<time>-<lease>/ and restored to its base
    (removed if new, fetched again if it had one). Then it equals its base:
    no later push, from any command, publishes it."""
    a, b = make_peer("a"), make_peer("b")
    write(a, "models/m.yaml", b"v1")
    write(a, "data/t/m/n/1/raw", b"version 1")
    write(a, "files/old", b"committed")
    a.push()
    write(a, "files/unrelated-before", b"not under the lease")
    with pytest.raises(LeaseLostError) as err:
        with a.lease("model/t/m", ttl_ms=60000) as lease:
            write(a, "data/t/m/n/2/raw", b"version 2")  # a new version
            write(a, "models/m.yaml", b"v2")  # a change to a committed file
            delete(a, "files/old")  # a delete
            _lose(lease, store)
            a.push("model method run")
    assert ".sync/lost-lease/" in err.value.hint and err.value.code == "lease_lost"
    aside = _lost_lease_dir(a)
    assert (aside / "data/t/m/n/2/raw").read_bytes() == b"version 2"
    assert (aside / "models/m.yaml").read_bytes() == b"v2"
    assert not (a.root / "data/t/m/n/2").exists(), "an empty version directory still counts as a version"
    assert read(a, "models/m.yaml") == b"v1" and read(a, "files/old") == b"committed"
    assert a.status()["dirtyFiles"] == ["files/unrelated-before"]

    write(a, "files/unrelated-after", b"later")
    a.push("something else")  # the next push from this cache
    b.pull()
    assert files(b) == {"models/m.yaml": b"v1", "data/t/m/n/1/raw": b"version 1", "files/old": b"committed",
                        "files/unrelated-before": b"not under the lease", "files/unrelated-after": b"later"}
    a.push(full_walk=True)  # even a full walk finds nothing more to publish
    assert b.pull().filesPulled == 0


def test_a_lease_found_lost_at_release_quarantines_too(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    with pytest.raises(LeaseLostError):
        with a.lease("model/t/m", ttl_ms=60000) as lease:
            write(a, "data/t/m/n/1/raw", b"never published")
            lease._stop.set()
            lease._thread.join()
            store.delete(lease.key)  # broken by force; release finds it gone
    assert (_lost_lease_dir(a) / "data/t/m/n/1/raw").exists() and not (a.root / "data").exists()
    a.push()
    b.pull()
    assert files(b) == {}


def test_another_threads_push_publishes_its_own_work_but_not_a_lost_leases(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    inside, lost, done = threading.Event(), threading.Event(), threading.Event()
    errors = []

    def method():
        try:
            with a.lease("model/t/m", ttl_ms=60000):
                write(a, "data/t/m/n/1/raw", b"under the lease")
                inside.set()
                lost.wait(10)
                done.wait(10)
                a.push()
        except LeaseLostError as e:
            errors.append(e)

    t = threading.Thread(target=method)
    t.start()
    assert inside.wait(10)
    (lease,) = a.fencing.holdings()
    _lose(lease, store)
    lost.set()
    write(a, "files/other", b"another command's work")
    a.push()  # this thread holds no lease: it commits its own work only
    done.set()
    t.join()
    assert len(errors) == 1
    b.pull()
    assert files(b) == {"files/other": b"another command's work"}


def test_a_path_that_cannot_be_fetched_back_is_left_unfetched_not_deleted(make_peer, store, monkeypatch):
    from swamp.errors import ObjectStoreError

    a, b = make_peer("a"), make_peer("b")
    write(a, "files/kept", b"committed")
    a.push()
    with pytest.raises(LeaseLostError):
        with a.lease("model/t/m", ttl_ms=60000) as lease:
            write(a, "files/kept", b"changed under the lease")
            _lose(lease, store)

            def unreachable(key):
                raise ObjectStoreError("connection refused")

            monkeypatch.setattr(store, "get", unreachable)
            a.push()
    monkeypatch.undo()
    assert not (a.root / "files/kept").exists() and a.status()["dirtyFiles"] == []
    a.push(full_walk=True)
    b.pull()
    assert files(b) == {"files/kept": b"committed"}
    assert a.hydrate("files/kept") and read(a, "files/kept") == b"committed"
