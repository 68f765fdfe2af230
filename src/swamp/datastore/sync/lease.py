"""Leases: named, expiring locks held as objects at ``leases/<name>``
(SYNC.md "Leases"). Only the allocation of new data versions uses them; the
hot path (push) never waits on one (S8).

- acquire: create-only; on 412 HEAD it; stale when the server's
  Last-Modified + ttlMs is in the past, or at once when its holder ran on
  this machine (same hostname) and its pid no longer exists (killed with
  kill -9: it will never heartbeat nor release), the same rule as the lock
  files of the filesystem datastore; take a stale lease over with If-Match
  on the ETag just read, so of several takers exactly one wins;
- heartbeat: every ttl/3, rewrite with If-Match on our last ETag. A failed
  heartbeat (or none succeeding for a whole ttl) means lost;
- release: delete with If-Match on our ETag.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
import uuid

from swamp.datastore.locks import holder_exited
from swamp.datastore.locks import lock_timeout_ms
from swamp.datastore.objectstore.base import (ObjectMeta, ObjectNotFound, ObjectStore, ObjectStoreError,
                                              PreconditionFailed)
from swamp.errors import LeaseLostError, LockTimeoutError
from swamp.util import clock
from swamp.util.ids import holder, hostname

from .layout import Layout

log = logging.getLogger(__name__)
DEFAULT_TTL_MS = 30_000


def is_stale(meta: ObjectMeta, ttl_ms: int, info: dict | None = None) -> bool:
    """Expired (Last-Modified + ttl in the past), or, given the lease body
    ``info``, held by a process of this machine that no longer exists."""
    return meta.last_modified + ttl_ms / 1000.0 < clock.now() or (info is not None and holder_exited(info))


def read_info(store: ObjectStore, key: str) -> dict:
    try:
        data, _ = store.get(key)
        info = json.loads(data)
        return info if isinstance(info, dict) else {}
    except (ObjectNotFound, ValueError):
        return {}


class Lease:
    def __init__(self, store: ObjectStore, layout: Layout, name: str, *, peer: str,
                 ttl_ms: int = DEFAULT_TTL_MS, timeout_ms: int | None = None) -> None:
        self.store = store
        self.name = name
        self.key = layout.lease(name)
        self.peer = peer
        self.ttl_ms = ttl_ms
        self.timeout_ms = lock_timeout_ms() if timeout_ms is None else timeout_ms
        self.nonce = uuid.uuid4().hex
        self.etag: str | None = None
        self.lost = False
        self._acquired_at = ""
        self._renewed = 0.0  # time.monotonic() of the last successful write
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _body(self) -> bytes:
        return json.dumps({
            "name": self.name, "holder": holder(), "host": hostname(), "pid": os.getpid(),
            "peer": self.peer, "nonce": self.nonce, "ttlMs": self.ttl_ms, "acquiredAt": self._acquired_at,
        }).encode()

    # ------------------------------------------------------------------ acquire
    def acquire(self) -> "Lease":
        self._acquired_at = clock.isoformat()
        deadline = time.monotonic() + self.timeout_ms / 1000.0
        delay = 0.02
        while True:
            started = time.monotonic()
            try:
                self.etag = self.store.put(self.key, self._body(), if_none_match=True)
                break
            except PreconditionFailed:
                pass
            meta = self.store.head(self.key)
            if meta is None:
                continue  # released between our create and our look: try again now
            held = read_info(self.store, self.key)
            if is_stale(meta, int(held.get("ttlMs", DEFAULT_TTL_MS)), held):
                try:
                    self.etag = self.store.put(self.key, self._body(), if_match=meta.etag)
                    break
                except (PreconditionFailed, ObjectNotFound):
                    pass  # another taker won, or the holder came back
            if time.monotonic() >= deadline:
                raise self._timeout(held)
            time.sleep(min(delay * random.uniform(0.5, 1.5), max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)
        self._renewed = started
        self.lost = False
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name=f"lease {self.name}", daemon=True)
        self._thread.start()
        return self

    def _timeout(self, held: dict) -> LockTimeoutError:
        if held.get("holder"):
            who = (f"{held['holder']} (peer {held.get('peer')}, pid {held.get('pid')}, "
                   f"since {held.get('acquiredAt')})")
        else:
            who = "another peer"
        return LockTimeoutError(
            f"timed out after {self.timeout_ms} ms waiting for lease {self.name!r}, held by {who}",
            hint="wait for it to finish, raise SWAMP_LOCK_TIMEOUT_MS, or break a dead holder's lease "
                 f"with 'swamp datastore lock release {self.name} --force'")

    # ---------------------------------------------------------------- heartbeat
    def _beat(self) -> None:
        while not self._stop.wait(self.ttl_ms / 3000.0):
            if not self.renew():
                return

    def renew(self, store: ObjectStore | None = None) -> bool:
        """Rewrite the lease with If-Match on our ETag; False once lost."""
        with self._mutex:
            if self.lost or self.etag is None:
                return False
            started = time.monotonic()
            try:
                self.etag = (store or self.store).put(self.key, self._body(), if_match=self.etag)
                self._renewed = started
                return True
            except (PreconditionFailed, ObjectNotFound):
                self.lost = True
                log.warning("lease %r was taken over by another peer", self.name)
                return False
            except ObjectStoreError as e:
                # Unreachable for now; once a whole ttl passed, others may hold it.
                if time.monotonic() - self._renewed >= self.ttl_ms / 1000.0:
                    self.lost = True
                    log.warning("lease %r lost: no heartbeat for %d ms (%s)", self.name, self.ttl_ms, e)
                    return False
                return True

    def ensure_held(self, store: ObjectStore | None = None) -> None:
        """Before publishing under this lease: fail if it is (or may be) lost.
        A lease not renewed for ttl/2 is renewed now, synchronously."""
        if not self.lost and time.monotonic() - self._renewed > self.ttl_ms / 2000.0:
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
                    self.store.delete(self.key, if_match=self.etag)
                except (PreconditionFailed, ObjectNotFound):
                    self.lost = True  # taken over (or broken): not ours to delete, and lost meanwhile
                    log.warning("lease %r was taken over by another peer before its release", self.name)
                except ObjectStoreError as e:
                    log.warning("could not release lease %r (it expires in %d ms): %s", self.name, self.ttl_ms, e)
            self.etag = None

    def __enter__(self) -> "Lease":
        return self.acquire()

    def __exit__(self, exc_type, exc, tb) -> None:
        lost = self.lost
        self.release()
        if lost and exc_type is None:
            raise LeaseLostError(f"lease {self.name!r} was lost while held",
                                 hint="another peer took it over after our heartbeat stalled")


def lease_status(store: ObjectStore, layout: Layout) -> list[dict]:
    out = []
    for meta in store.list(layout.lease_prefix):
        info = read_info(store, meta.key)
        ttl = int(info.get("ttlMs", DEFAULT_TTL_MS))
        out.append({
            "name": layout.lease_name(meta.key), "holder": info.get("holder"), "host": info.get("host"),
            "pid": info.get("pid"), "peer": info.get("peer"), "acquiredAt": info.get("acquiredAt"),
            "ttlMs": ttl, "stale": is_stale(meta, ttl, info),
        })
    return sorted(out, key=lambda d: d["name"])


def force_release(store: ObjectStore, layout: Layout, name: str) -> bool:
    """Break a lease whatever its state; returns whether one was held."""
    key = layout.lease(name)
    if store.head(key) is None:
        return False
    store.delete(key)
    return True

