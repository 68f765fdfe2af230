"""Leases: named, expiring locks held as objects at ``leases/<name>``
(SYNC.md "Leases"). Only the allocation of new data versions uses them; the
hot path (push) never waits on one (S8), unless it publishes a new version
no holding covers (publishing.py: then it takes that model's lease).

No wall clock is trusted. Peers' clocks differ (by seconds, or by minutes on
a laptop back from sleep), and the server's Last-Modified is a third clock;
comparing any two of them lets a fast peer take a live lease. Staleness is
judged by what the taker itself sees, with its own monotonic clock: every
write of a lease (create, heartbeat, takeover) gives it a new ETag, so a
lease whose ETag the taker has seen unchanged for a whole ttl has had no
heartbeat for at least that long.

- acquire: create-only; on 412 read it (body and ETag). It is stale once
  this process has watched the same ETag for ttlMs (the holder's ttl) of its
  own monotonic clock, or at once when its holder ran on this machine (same
  boot and PID namespace, ``machine``) and its pid no longer exists (killed with kill -9: it will never
  heartbeat nor release; the rule of the filesystem lock files). A stale
  lease is taken over with If-Match on the ETag watched, so of several
  takers exactly one wins, and none wins over a heartbeat that landed
  meanwhile;
- heartbeat: every ttl/3, rewrite with If-Match on our last ETag. A failed
  heartbeat (or none succeeding for a whole ttl) means lost;
- release: delete with If-Match on our ETag.

A wait for a lease can be ended by a cancel (``cancelled``, a
threading.Event: a workflow step's Control): the pauses between tries are
waits on the event, so the tries, the staleness watch and the takeover keep
the schedule of an ordinary wait; once it is set, no further try is made
and ``acquire`` raises ``cancelled_error`` (a lease got just as it was set
is released again).

Why the holder is safe: a taker starts watching an ETag only after the
write that made it landed, which is after the holder's clock read
``_renewed`` for that write; so no taker can take over before ``_renewed +
ttl``, which is when the holder counts its lease as lost. Only the rate of
the two monotonic clocks matters, never their offset.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Callable

from swamp.datastore.objectstore.base import ObjectNotFound, ObjectStore, ObjectStoreError, PreconditionFailed
from swamp.errors import LeaseLostError, LockTimeoutError, SwampError
from swamp.util import clock, jitter
from swamp.util.ids import holder, hostname
from swamp.util.ids import uuid4_hex

from .holders import holder_exited, lock_timeout_ms, machine_identity
from .layout import Layout


def _log():
    import logging  # here: a lease that goes well logs nothing, and logging costs a command ~2 ms

    return logging.getLogger(__name__)


DEFAULT_TTL_MS = 30_000


class Watch:
    """What this process has seen of lease objects: per key, the ETag last
    read and the monotonic time it was first read. Shared by every lease of
    a process (the module's ``WATCH``), so a second attempt in the same
    process does not start counting again from zero."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def unchanged_for(self, where: str, key: str, etag: str) -> float:
        """Seconds this ETag has been seen unchanged (0 when it is new).
        Call only after the read that returned ``etag`` completed."""
        now = self.monotonic()
        with self._lock:
            seen = self._seen.get((where, key))
            if seen is None or seen[0] != etag:
                self._seen[(where, key)] = (etag, now)
                return 0.0
            return now - seen[1]

    def forget(self, where: str, key: str) -> None:
        with self._lock:
            self._seen.pop((where, key), None)


WATCH = Watch()


def holder_ttl_ms(info: dict, fallback: int = DEFAULT_TTL_MS) -> int:
    """The ttl the holder heartbeats against. An unreadable body (torn,
    foreign) gets the larger of ours and the default: waiting longer is safe,
    shorter is not."""
    ttl = info.get("ttlMs")
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0:
        return ttl
    return max(fallback, DEFAULT_TTL_MS)


#: tries of a conditional write refused while the lease still carries our nonce (Lease._still_ours)
_REFUSED_TRIES = 4


def read_lease(store: ObjectStore, key: str) -> tuple[dict, str] | None:
    """(body, etag) of a lease, or None when there is none. A body that does
    not parse is ``{}``: held by someone unknown."""
    try:
        data, etag = store.get(key)
    except ObjectNotFound:
        return None
    try:
        info = json.loads(data)
    except ValueError:
        info = {}
    return (info if isinstance(info, dict) else {}), etag


def cancelled_error(name: str) -> SwampError:
    """What a wait for lease ``name`` ended by a cancel raises."""
    return SwampError(f"cancelled while waiting for lease {name!r}: it is not held, and nothing was "
                      "written under it", code="cancelled")


class Lease:
    def __init__(self, store: ObjectStore, layout: Layout, name: str, *, peer: str,
                 ttl_ms: int = DEFAULT_TTL_MS, timeout_ms: int | None = None,
                 watch: Watch | None = None, sleep: Callable[[float], None] = time.sleep,
                 cancelled: threading.Event | None = None) -> None:
        self.store = store
        self.name = name
        self.key = layout.lease(name)
        self.peer = peer
        self.ttl_ms = ttl_ms
        self.timeout_ms = lock_timeout_ms() if timeout_ms is None else timeout_ms
        self.watch = watch or WATCH
        self._monotonic = self.watch.monotonic
        self._sleep = sleep  # tests inject a clock: ``watch`` and ``sleep`` go together
        #: set: the wait for the lease ends (``acquire`` raises cancelled_error); with
        #: it, the pauses between tries are ``cancelled.wait`` rather than ``time.sleep``
        self.cancelled = cancelled
        self.nonce = uuid4_hex()
        self.etag: str | None = None
        self.lost = False
        #: why it was lost, as this object saw it: "taken over" (a write
        #: refused), "gone" (deleted: a release by force), "stalled" (no
        #: heartbeat for a ttl); the log's epoch record, if any, says more
        self.lost_reason: str | None = None
        #: the nonce of the holding this acquire took over (None: created);
        #: the engine fences it in the log (fencing.py)
        self.taken_from: str | None = None
        self._acquired_at = ""
        self._renewed = 0.0  # monotonic time read just before our last successful write
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> bytes:
        # "beat" differs on every write: S3's ETag is the MD5 of the body, and
        # a heartbeat that rewrote identical bytes would keep its ETag, so a
        # taker would see it unchanged and take a live lease.
        return json.dumps({
            "name": self.name, "holder": holder(), "host": hostname(), "pid": os.getpid(),
            "machine": machine_identity(os.getpid()),  # where that pid means something (holders.holder_exited)
            "peer": self.peer, "nonce": self.nonce, "ttlMs": self.ttl_ms, "acquiredAt": self._acquired_at,
            "beat": uuid4_hex(),
        }).encode()

    # ------------------------------------------------------------------ acquire
    def acquire(self) -> "Lease":
        self._acquired_at = clock.isoformat()  # shown to people only; never compared
        deadline = self._monotonic() + self.timeout_ms / 1000.0
        delay = 0.02
        held: dict = {}
        while True:
            if self.cancelled is not None and self.cancelled.is_set():
                raise cancelled_error(self.name)
            started = self._monotonic()
            try:
                self.etag = self.store.put(self.key, self._body(), if_none_match=True)
                break
            except PreconditionFailed:
                pass
            seen = read_lease(self.store, self.key)
            if seen is None:
                continue  # released between our create and our read: try again now
            held, etag = seen
            ttl_s = holder_ttl_ms(held, self.ttl_ms) / 1000.0
            waited = self.watch.unchanged_for(self.store.name, self.key, etag)
            if waited >= ttl_s or holder_exited(held):
                started = self._monotonic()
                try:
                    self.etag = self.store.put(self.key, self._body(), if_match=etag)
                    nonce = held.get("nonce")
                    self.taken_from = nonce if isinstance(nonce, str) and nonce else None
                    break
                except (PreconditionFailed, ObjectNotFound):
                    pass  # another taker won, or the holder came back
            now = self._monotonic()
            if now >= deadline:
                raise self._timeout(held)
            # Poll with backoff, but look again right when the watched ETag
            # would turn stale, and never sleep past the deadline.
            pause = min(delay * jitter.uniform(0.5, 1.5), max(0.0, ttl_s - waited) + 0.01, deadline - now)
            self._pause(max(0.0, pause))
            delay = min(delay * 2, 1.0)
        self.watch.forget(self.store.name, self.key)
        self._renewed = started
        if self.cancelled is not None and self.cancelled.is_set():
            # Got just as the cancel came: let go again (``taken_from`` still
            # says whose holding was taken over, for the caller to fence).
            self.release()
            raise cancelled_error(self.name)
        self.lost = False
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name=f"lease {self.name}", daemon=True)
        self._thread.start()
        return self

    def _pause(self, seconds: float) -> None:
        """The pause between two tries: on the cancel event when there is one
        (its set ends the pause at once), else ``sleep``. An injected
        ``sleep`` keeps its clock's time even with an event (a fake clock
        would never move on a real wait); the event is then checked before
        each try."""
        if self.cancelled is None or self._sleep is not time.sleep:
            self._sleep(seconds)
        else:
            self.cancelled.wait(seconds)

    def _timeout(self, held: dict) -> LockTimeoutError:
        if held.get("holder"):
            who = (f"{held['holder']} (peer {held.get('peer')}, pid {held.get('pid')}, "
                   f"since {held.get('acquiredAt')})")
        else:
            who = "another peer"
        ttl_ms = holder_ttl_ms(held, self.ttl_ms)
        return LockTimeoutError(
            f"timed out after {self.timeout_ms} ms waiting for lease {self.name!r}, held by {who}",
            hint="wait for it to finish, raise SWAMP_LOCK_TIMEOUT_MS (a holder that stopped heartbeating is "
                 f"taken over once its lease has stayed unchanged for {ttl_ms} ms), or break a dead holder's "
                 f"lease with 'swamp datastore lock release {self.name} --force'")

    # ---------------------------------------------------------------- heartbeat
    def _beat(self) -> None:
        while not self._stop.wait(self.ttl_ms / 3000.0):
            if not self.renew():
                return

    def _still_ours(self, store: ObjectStore, write: Callable[[str], object]) -> object:
        """``write(etag)`` after a conditional write on our ETag was refused,
        while the lease still carries our nonce: a store whose gateway
        answers from a lagging view (SeaweedFS's filer feed) can refuse the
        ETag it just returned, and a write of ours whose answer was lost
        leaves the ETag we know behind. Each try is conditional on the ETag
        just read, so a peer that took the lease over still wins; the
        refusal stands once the lease carries another nonce, or after a few
        tries (about a second)."""
        for attempt in range(_REFUSED_TRIES):
            seen = read_lease(store, self.key)
            if seen is None:
                raise ObjectNotFound(self.key)
            held, etag = seen
            if held.get("nonce") != self.nonce:
                raise PreconditionFailed(f"{self.key}: held by another nonce")
            self._sleep(0.05 * 2 ** attempt)
            try:
                return write(etag)
            except PreconditionFailed:
                continue
        raise PreconditionFailed(f"{self.key}: our ETag kept being refused")

    def renew(self, store: ObjectStore | None = None) -> bool:
        """Rewrite the lease with If-Match on our ETag; False once lost."""
        with self._mutex:
            if self.lost or self.etag is None:
                return False
            started = self._monotonic()
            target = store or self.store
            try:
                try:
                    self.etag = target.put(self.key, self._body(), if_match=self.etag)
                except PreconditionFailed:
                    self.etag = self._still_ours(target, lambda etag: target.put(self.key, self._body(),
                                                                                 if_match=etag))
                self._renewed = started
                return True
            except (PreconditionFailed, ObjectNotFound) as e:
                self.lost = True
                self.lost_reason = "gone" if isinstance(e, ObjectNotFound) else "taken over"
                _log().warning("lease %r was taken over by another peer", self.name)
                return False
            except ObjectStoreError as e:
                # Unreachable for now; once a whole ttl passed, others may hold it.
                if self._monotonic() - self._renewed >= self.ttl_ms / 1000.0:
                    self.lost = True
                    self.lost_reason = "stalled"
                    _log().warning("lease %r lost: no heartbeat for %d ms (%s)", self.name, self.ttl_ms, e)
                    return False
                return True

    def remaining_s(self) -> float:
        """Seconds before any taker could judge this lease stale (0 once
        lost): what a holder may still do before it must renew."""
        if self.lost or self.etag is None:
            return 0.0
        return max(0.0, self.ttl_ms / 1000.0 - (self._monotonic() - self._renewed))

    def ensure_held(self, store: ObjectStore | None = None) -> None:
        """Before publishing under this lease: fail if it is (or may be) lost.
        A lease not renewed for ttl/2 is renewed now, synchronously."""
        if not self.lost and self._monotonic() - self._renewed > self.ttl_ms / 2000.0:
            self.renew(store)
        if self.lost:
            raise LeaseLostError(f"lease {self.name!r} was lost; nothing was published under it",
                                 hint="another peer took it over after our heartbeat stalled; retry")

    # ------------------------------------------------------------------ release
    def release(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        with self._mutex:
            if not self.lost and self.etag is not None:
                try:
                    try:
                        self.store.delete(self.key, if_match=self.etag)
                    except PreconditionFailed:
                        self._still_ours(self.store, lambda etag: self.store.delete(self.key, if_match=etag))
                except (PreconditionFailed, ObjectNotFound) as e:
                    self.lost = True  # taken over (or broken): not ours to delete, and lost meanwhile
                    self.lost_reason = "gone" if isinstance(e, ObjectNotFound) else "taken over"
                    _log().warning("lease %r was taken over by another peer before its release", self.name)
                except ObjectStoreError as e:
                    _log().warning("could not release lease %r (it expires in %d ms): %s", self.name, self.ttl_ms, e)
            self.etag = None

    def __enter__(self) -> "Lease":
        return self.acquire()

    def __exit__(self, exc_type, exc, tb) -> None:
        lost = self.lost
        self.release()
        if lost and exc_type is None:
            raise LeaseLostError(f"lease {self.name!r} was lost while held",
                                 hint="another peer took it over after our heartbeat stalled")


def lease_status(store: ObjectStore, layout: Layout, watch: Watch | None = None) -> list[dict]:
    """Every lease held. ``stale`` is what a taker in this process would
    decide now: its holder on this machine is gone, or this process has
    watched it unchanged for its ttl. One look at a lease held elsewhere
    cannot tell (no clock is trusted), so it counts as live."""
    watch = watch or WATCH
    out = []
    for meta in store.list(layout.lease_prefix):
        seen = read_lease(store, meta.key)
        if seen is None:
            continue  # released since the listing
        info, etag = seen
        ttl = holder_ttl_ms(info)
        stale = watch.unchanged_for(store.name, meta.key, etag) >= ttl / 1000.0 or holder_exited(info)
        out.append({
            "name": layout.lease_name(meta.key), "holder": info.get("holder"), "host": info.get("host"),
            "pid": info.get("pid"), "machine": info.get("machine"), "peer": info.get("peer"),
            "acquiredAt": info.get("acquiredAt"),
            "ttlMs": ttl, "stale": stale,
        })
    return sorted(out, key=lambda d: d["name"])


def force_release(store: ObjectStore, layout: Layout, name: str) -> bool:
    """Break a lease whatever its state; returns whether one was held."""
    key = layout.lease(name)
    if store.head(key) is None:
        return False
    store.delete(key)
    return True
