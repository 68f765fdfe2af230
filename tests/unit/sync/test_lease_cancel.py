"""A wait for a lease that a cancel ends, in the lease itself
(datastore/sync/lease.py ``cancelled``): a workflow step whose method has
ended waits for its model's lease, and its cancel (run cancel, `swamp model
cancel`, its timeout) must end that wait at once, taking nothing and writing
nothing. The wait keeps the schedule of an ordinary one: the same tries, the
same takeover of a stale holder, the same timeout message."""

from __future__ import annotations

import json
import threading

import pytest

from swamp.datastore.filesystem import FilesystemDatastore
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync.layout import Layout
from swamp.datastore.sync.lease import Lease, Watch, read_lease
from swamp.errors import LockTimeoutError, SwampError
from swamp.util import jitter

NAME = "model/acme/thing/1"
LAYOUT = Layout("default")
#: how long a test waits for a thread that should already have returned:
#: far under the lock timeouts below (60 s), so a wait that ignored the
#: cancel fails the test instead of passing late
JOIN_S = 10


class RecordingStore(MemoryObjectStore):
    """A memory store that records its lease requests: (what, fake time)."""

    def __init__(self, now=lambda: 0.0) -> None:
        super().__init__()
        self.now = now
        self.calls: list[tuple[str, float]] = []
        self.written_by: list[str] = []  # the nonce of every lease write that landed
        self.after_create = lambda: None

    def put(self, key, data, *, if_none_match=False, if_match=None):
        what = "create" if if_none_match else "takeover" if if_match else "put"
        self.calls.append((what, round(self.now(), 6)))
        etag = super().put(key, data, if_none_match=if_none_match, if_match=if_match)
        self.written_by.append(json.loads(data).get("nonce", ""))
        if what == "create":
            self.after_create()
        return etag

    def get(self, key):
        self.calls.append(("read", round(self.now(), 6)))
        return super().get(key)


class NotingEvent(threading.Event):
    """A cancel event that says when a wait has begun pausing on it."""

    def __init__(self) -> None:
        super().__init__()
        self.pausing = threading.Event()

    def wait(self, timeout=None):
        self.pausing.set()
        return super().wait(timeout)


class FakeTime:
    def __init__(self) -> None:
        self.t = 100.0

    def monotonic(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s


def _wait_in_thread(acquire):
    """Run ``acquire`` in a thread; returns (thread, what it raised or returned)."""
    out: dict = {}

    def run():
        try:
            out["value"] = acquire()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def _stale_holder(store, *, ttl_ms: int) -> None:
    """A holder on another machine that never heartbeats (nor releases)."""
    store.put(LAYOUT.lease(NAME), json.dumps({
        "name": NAME, "holder": "someone@elsewhere", "host": "elsewhere", "pid": 4242, "peer": "old",
        "nonce": "old-nonce", "ttlMs": ttl_ms, "acquiredAt": "", "beat": "b"}).encode(), if_none_match=True)


def test_a_cancel_ends_a_wait_behind_a_live_holder_and_writes_nothing():
    store = RecordingStore()
    with Lease(store, LAYOUT, NAME, peer="A") as holder:
        cancelled = NotingEvent()
        waiter = Lease(store, LAYOUT, NAME, peer="B", timeout_ms=60_000, cancelled=cancelled)
        thread, out = _wait_in_thread(waiter.acquire)
        assert cancelled.pausing.wait(JOIN_S), "the waiter never paused between tries"
        cancelled.set()
        thread.join(JOIN_S)
        assert not thread.is_alive(), "the wait did not end on its cancel"
        assert isinstance(out.get("error"), SwampError) and out["error"].code == "cancelled", out
        assert "cancelled while waiting for lease" in out["error"].message
        assert waiter.nonce not in store.written_by  # no write of the waiter ever landed
        assert read_lease(store, LAYOUT.lease(NAME))[0]["nonce"] == holder.nonce and not holder.lost


def test_an_event_set_before_the_wait_makes_no_request():
    store = RecordingStore()
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(SwampError) as err:
        Lease(store, LAYOUT, NAME, peer="B", cancelled=cancelled).acquire()
    assert err.value.code == "cancelled"
    assert store.calls == []


def test_a_lease_got_just_as_the_cancel_came_is_released_again():
    store = RecordingStore()
    cancelled = threading.Event()
    store.after_create = cancelled.set  # the cancel lands while the create is on its way
    lease = Lease(store, LAYOUT, NAME, peer="B", cancelled=cancelled)
    with pytest.raises(SwampError) as err:
        lease.acquire()
    assert err.value.code == "cancelled"
    assert read_lease(store, LAYOUT.lease(NAME)) is None  # let go again: free for the next holder
    assert lease.etag is None and lease._thread is None  # no heartbeat was started


def _takeover_schedule(monkeypatch, with_event: bool):
    monkeypatch.setattr(jitter, "uniform", lambda a, b: 1.0)  # no jitter: two runs comparable
    fake = FakeTime()
    store = RecordingStore(fake.monotonic)
    _stale_holder(store, ttl_ms=1000)
    store.calls.clear()
    lease = Lease(store, LAYOUT, NAME, peer="B", timeout_ms=60_000, watch=Watch(fake.monotonic),
                  sleep=fake.sleep, cancelled=threading.Event() if with_event else None)
    # In a thread: a wait that paused in real time would never see the
    # fake clock move, and must fail the test rather than hang it.
    thread, out = _wait_in_thread(lease.acquire)
    thread.join(JOIN_S)
    assert not thread.is_alive(), "the wait did not keep the injected clock's time"
    try:
        assert "error" not in out, out
        return store.calls, lease.taken_from
    finally:
        lease.release()


def test_a_stale_holder_is_taken_over_on_the_same_schedule_with_or_without_a_cancel_event(monkeypatch):
    plain, plain_from = _takeover_schedule(monkeypatch, with_event=False)
    cancellable, cancellable_from = _takeover_schedule(monkeypatch, with_event=True)
    assert plain_from == cancellable_from == "old-nonce"
    assert cancellable == plain  # the same requests at the same (watched) times
    assert plain[-1][0] == "takeover" and plain[-1][1] - plain[0][1] >= 1.0  # once its ttl was watched out


def test_a_cancel_set_during_a_pause_on_an_injected_clock_ends_the_wait_at_the_next_try():
    fake = FakeTime()
    store = RecordingStore(fake.monotonic)
    cancelled = threading.Event()
    pauses: list[float] = []

    def sleep(s: float) -> None:
        pauses.append(s)
        fake.sleep(s)
        if len(pauses) == 3:
            cancelled.set()

    with Lease(store, LAYOUT, NAME, peer="A"):
        store.calls.clear()
        waiting = Lease(store, LAYOUT, NAME, peer="B", timeout_ms=60_000, watch=Watch(fake.monotonic),
                        sleep=sleep, cancelled=cancelled)
        thread, out = _wait_in_thread(waiting.acquire)
        thread.join(JOIN_S)
        cancelled.set()  # a wait that paused in real time never called ``sleep``: end it
        assert not thread.is_alive() or thread.join(JOIN_S) is None
    assert pauses, "the pauses did not go through the injected sleep"
    err = out.get("error")
    assert isinstance(err, SwampError) and err.code == "cancelled", out
    assert len(pauses) == 3  # no try after the pause the cancel came in
    assert [what for what, _ in store.calls].count("create") == 3


def test_a_stale_holder_is_taken_over_by_a_wait_that_has_a_cancel_event():
    store = MemoryObjectStore()
    _stale_holder(store, ttl_ms=300)
    lease = Lease(store, LAYOUT, NAME, peer="B", timeout_ms=60_000, cancelled=threading.Event())
    thread, out = _wait_in_thread(lease.acquire)
    thread.join(JOIN_S)
    try:
        assert not thread.is_alive() and "error" not in out, out
        assert lease.taken_from == "old-nonce"
        assert read_lease(store, LAYOUT.lease(NAME))[0]["nonce"] == lease.nonce
    finally:
        lease.release()


def test_a_wait_with_a_cancel_event_that_runs_out_says_its_real_length():
    store = MemoryObjectStore()
    with Lease(store, LAYOUT, NAME, peer="A"):
        with pytest.raises(LockTimeoutError) as err:
            Lease(store, LAYOUT, NAME, peer="B", timeout_ms=300, cancelled=threading.Event()).acquire()
    assert "timed out after 300 ms waiting for lease" in err.value.message
    assert "after 0 ms" not in err.value.message


def test_the_filesystem_datastores_lock_honours_the_cancel(tmp_path):
    holder_ds, waiter_ds = FilesystemDatastore(tmp_path), FilesystemDatastore(tmp_path)
    with holder_ds.lock(NAME) as held:
        cancelled = NotingEvent()

        def wait():
            with waiter_ds.lock(NAME, timeout_ms=60_000, cancelled=cancelled):
                return "got it"

        thread, out = _wait_in_thread(wait)
        assert cancelled.pausing.wait(JOIN_S), "the waiter never paused between tries"
        cancelled.set()
        thread.join(JOIN_S)
        assert not thread.is_alive(), "the filesystem lock's wait did not end on its cancel"
        assert "value" not in out and out["error"].code == "cancelled", out
        on_disk = read_lease(LocalDirObjectStore(tmp_path / ".locks"), LAYOUT.lease(NAME))
        assert on_disk[0]["nonce"] == held.nonce and not held.lost
        assert not waiter_ds.held.holds(NAME)
    with waiter_ds.lock(NAME, timeout_ms=5_000, cancelled=threading.Event()):
        pass  # free once its holder let go: the cancelled wait left nothing behind


def test_a_takeover_let_go_on_a_cancel_still_fences_the_old_holding(make_peer, store):
    """On a shared datastore a takeover is fenced in the log before any work;
    one let go at once because the cancel came still is, so the old holder,
    if only slow, never publishes under its holding."""
    dead = make_peer("dead")
    held = dead.lease(NAME, ttl_ms=200)
    old = held.__enter__()
    old._stop.set()  # the holder stalls: no heartbeat, no release
    taker = make_peer("taker")
    cancelled = threading.Event()
    real_put = store.put

    def put(key, data, **kw):
        etag = real_put(key, data, **kw)
        if key == taker.layout.lease(NAME) and kw.get("if_match"):
            cancelled.set()  # the cancel lands while the takeover is on its way
        return etag

    store.put = put
    try:
        thread, out = _wait_in_thread(lambda: taker.lease(NAME, timeout_ms=60_000, cancelled=cancelled).__enter__())
        thread.join(JOIN_S)
        assert not thread.is_alive() and out["error"].code == "cancelled", out
        assert read_lease(store, taker.layout.lease(NAME)) is None  # let go again
        fences = [json.loads(store.get(k)[0])["fence"] for k in list(store._objects) if "/log/" in k]
        assert [(f["lease"], f["from"]) for f in fences] == [(NAME, old.nonce)]
    finally:
        held.gen.close()  # the stalled holder's block ends (its holding lost), not at interpreter exit
