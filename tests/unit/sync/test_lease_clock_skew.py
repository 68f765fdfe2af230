"""Leases under clock skew (issue 9 item 3, repro d): staleness is judged by
the taker's own monotonic clock watching the lease's ETag, never by a wall
clock against the server's Last-Modified. Peers whose clocks differ by
minutes neither take a live lease nor wait for ever on a dead one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync.layout import Layout
from swamp.datastore.sync.lease import Lease, Watch, lease_status
from swamp.errors import LeaseLostError, LockTimeoutError
from swamp.util import clock

NAME = "model/acme/thing/123"


class FakeTime:
    """One peer's monotonic clock; ``sleep`` advances it and lets the rest
    of the world (a holder's heartbeats) happen meanwhile."""

    def __init__(self, start: float) -> None:
        self.t = start
        self.meanwhile = lambda: None

    def monotonic(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s
        self.meanwhile()


class SkewedServer(MemoryObjectStore):
    """A server whose clock (Last-Modified) is minutes off everyone's."""

    def __init__(self, skew_s: float) -> None:
        super().__init__()
        self.skew_s = skew_s

    def head(self, key):
        meta = super().head(key)
        return None if meta is None else type(meta)(meta.key, meta.size, meta.etag, meta.last_modified + self.skew_s)

    def list(self, prefix="", start_after=None):
        for meta in super().list(prefix, start_after):
            yield type(meta)(meta.key, meta.size, meta.etag, meta.last_modified + self.skew_s)


class ContentETags(MemoryObjectStore):
    """ETags as S3 makes them: the MD5 of the body, so rewriting identical
    bytes keeps the ETag."""

    def _etag(self, data: bytes) -> str:
        import hashlib

        return f'"{hashlib.md5(data).hexdigest()}"'


def _lease(store, peer, fake: FakeTime, **kw) -> Lease:
    return Lease(store, Layout("default"), NAME, peer=peer, watch=Watch(fake.monotonic), sleep=fake.sleep, **kw)


@pytest.mark.parametrize("skew_s", [31, 300, -300])
def test_a_peer_whose_clock_is_off_does_not_take_a_live_lease(make_peer, skew_s):
    """The d_ scenario: B's wall clock runs 31 s (or 5 min) ahead, or 5 min
    behind. A holds the lease and heartbeats; B waits and gives up (exit
    75, naming A); A never loses it and publishes."""
    a, b = make_peer("A"), make_peer("B")
    with a.lease(NAME) as held:
        clock.set_clock(lambda: time.time() + skew_s)
        try:
            with pytest.raises(LockTimeoutError) as err:
                with b.lease(NAME, timeout_ms=300):
                    pass
        finally:
            clock.set_clock(None)
        assert err.value.exit_code == 75 and "peer A" in err.value.message
        held.ensure_held()
        assert not held.lost


@pytest.mark.parametrize("server", ["skewed -600 s", "skewed +600 s", "content etags"])
def test_a_heartbeating_holder_keeps_its_lease_for_ever_against_a_patient_taker(server):
    """B waits ten ttls of its own clock while A heartbeats every ttl/3:
    B never takes over, whatever the server's clock says, and on a server
    whose ETags name contents (S3), where a heartbeat must still change it."""
    store = ContentETags() if server == "content etags" else SkewedServer(600 if "+" in server else -600)
    a_time, b_time = FakeTime(1000.0), FakeTime(-5e6)  # monotonic clocks have arbitrary origins
    a = _lease(store, "A", a_time, ttl_ms=30_000)
    a.acquire()
    a._stop.set()  # its heartbeats are driven by hand below, in B's time
    beats = []

    def a_heartbeats():
        while b_time.t - start >= (len(beats) + 1) * 10.0:
            a_time.t += 10.0
            beats.append(a.renew())

    b_time.meanwhile = a_heartbeats
    start = b_time.t
    b = _lease(store, "B", b_time, ttl_ms=30_000, timeout_ms=300_000)
    with pytest.raises(LockTimeoutError):
        b.acquire()
    assert len(beats) >= 29 and all(beats) and not a.lost
    a.ensure_held()


def test_a_dead_holder_is_taken_over_after_its_ttl_as_the_taker_sees_it():
    """A stops heartbeating (frozen, or dead on another machine). However far
    the server's clock is ahead (Last-Modified + ttl stays in the future for
    ten minutes), B takes over once it has watched the lease unchanged for
    A's ttl by its own clock; not before; and A then finds it lost."""
    store = SkewedServer(600)
    a_time, b_time = FakeTime(0.0), FakeTime(123.0)
    a = _lease(store, "A", a_time, ttl_ms=30_000)
    a.acquire()
    a._stop.set()
    a._thread.join()

    early = _lease(store, "B", b_time, ttl_ms=5_000, timeout_ms=29_000)
    with pytest.raises(LockTimeoutError):
        early.acquire()  # 29 s of watching: not yet (A's ttl is 30 s, not B's 5 s)

    b = _lease(store, "B", b_time, ttl_ms=5_000, timeout_ms=60_000)
    b.watch = early.watch  # the same process goes on watching
    b.acquire()
    try:
        assert 30.0 <= b_time.t - 123.0 < 31.0
        assert [s["peer"] for s in lease_status(store, Layout("default"))] == ["B"]
        assert a.renew() is False and a.lost
        with pytest.raises(LeaseLostError):
            a.ensure_held()
    finally:
        b.release()


def test_a_heartbeat_restarts_the_takers_count(make_peer):
    """A holder that stalls for most of a ttl and then heartbeats again is
    not taken over: the new ETag starts the taker's count from zero."""
    store = MemoryObjectStore()
    a_time, b_time = FakeTime(0.0), FakeTime(0.0)
    a = _lease(store, "A", a_time, ttl_ms=30_000)
    a.acquire()
    a._stop.set()

    beat = []

    def stall_then_beat():
        # Once, as soon as B's clock passes 25 s (B's waits are jittered, so
        # a fixed one-second window could be stepped over).
        if b_time.t >= 25.0 and not beat:
            beat.append(a.renew())

    b_time.meanwhile = stall_then_beat
    b = _lease(store, "B", b_time, ttl_ms=30_000, timeout_ms=50_000)
    with pytest.raises(LockTimeoutError):
        b.acquire()  # stale at 55 s at the earliest
    assert a.renew() and not a.lost


def test_a_torn_lease_body_waits_for_the_longer_ttl():
    store = MemoryObjectStore()
    store.put(Layout("default").lease(NAME), b"{not json", if_none_match=True)
    t = FakeTime(0.0)
    b = _lease(store, "B", t, ttl_ms=1_000, timeout_ms=120_000)
    b.acquire()
    try:
        assert 30.0 <= t.t < 31.0  # the default ttl, not B's own 1 s
    finally:
        b.release()


# --------------------------------------------------- separate processes
HOLD = '''
import sys, time
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine

e = SyncEngine(LocalDirObjectStore(sys.argv[1]), sys.argv[2], peer="slow")
with e.lease("model/acme/x/1", ttl_ms=1000) as held:
    print("held", flush=True)
    sys.stdin.readline()
    held.ensure_held()
    print("still held", flush=True)
'''

TAKE = '''
import sys, time
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.errors import LockTimeoutError
from swamp.util import clock

skew = float(sys.argv[3])
if skew:
    clock.set_clock(lambda: time.time() + skew)
e = SyncEngine(LocalDirObjectStore(sys.argv[1]), sys.argv[2], peer="fast")
try:
    with e.lease("model/acme/x/1", timeout_ms=3000):
        print("acquired", flush=True)
except LockTimeoutError as err:
    print("timeout", err.exit_code, err.message, flush=True)
'''


def _faketime() -> list[str] | None:
    exe = shutil.which("faketime")
    return [exe, "-f", "+5m"] if exe else None


@pytest.mark.parametrize("how", ["injected", "faketime"])
def test_two_processes_with_clocks_minutes_apart(tmp_path, how):
    """Two processes, heartbeats running: the taker's clock is 5 minutes
    ahead (libfaketime from the Debian package 'faketime', or the injected
    clock). It waits three of the holder's ttls and gives up; the holder
    still holds its lease."""
    from tests.helpers import _env

    prefix: list[str] = []
    skew = "300"
    if how == "faketime":
        prefix = _faketime() or []
        if not prefix:
            pytest.skip("faketime is not installed (Debian package 'faketime')")
        skew = "0"
    objects = str(tmp_path / "objects")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, objects, str(tmp_path / "slow")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        taker = subprocess.run([*prefix, sys.executable, "-c", TAKE, objects, str(tmp_path / "fast"), skew],
                               capture_output=True, text=True, env=_env(), timeout=60)
        assert taker.stdout.startswith("timeout 75") and "peer slow" in taker.stdout, taker.stdout + taker.stderr
        out, _ = holder.communicate("go\n", timeout=30)
        assert out.strip() == "still held"
    finally:
        holder.kill()
        holder.wait()
    body = [json.loads(p.read_text().split("\n", 1)[1]) for p in (tmp_path / "objects").rglob("0*")
            if p.is_file() and p.read_text().split("\n", 1)[1].startswith("{")]
    assert all(b.get("peer") != "fast" for b in body), "the fast peer wrote the lease at some point"


@pytest.mark.s3
def test_on_s3_a_heartbeating_lease_is_never_taken(seaweedfs):
    """On a real S3 server (ETag = MD5 of the body): A holds with a 1 s ttl
    and heartbeats; B waits three of its ttls and gives up."""
    store = seaweedfs.store()
    a = Lease(store, Layout("default"), NAME, peer="A", ttl_ms=1000)
    with a:
        b = Lease(store, Layout("default"), NAME, peer="B", ttl_ms=1000, timeout_ms=3000)
        with pytest.raises(LockTimeoutError):
            b.acquire()
        a.ensure_held()
