"""The cached datastore: a local cache directory (the repository's
``.swamp/``) plus the sync engine, behind the same Datastore interface as
the filesystem datastore, so nothing above knows the state is shared.

The command lifecycle lives in ``session``: take the leases the command
needs (a model's lease to allocate that model's versions), pull, run, push
the commit, release — in that order — and report success only once the
commit is durable. If a lease is lost meanwhile (a failed heartbeat, the
check before the commit, or a release that finds it taken over), the engine
publishes nothing the body wrote under it, now or in any later push: those
paths go back to their committed state and the bytes are kept, local only,
in ``.sync/lost-lease/`` (SyncEngine.lease); the command fails with
``lease_lost``. Read-only commands pull first (one request when nothing
changed) unless offline. Two processes sharing one cache serialize their
sync steps with a local lock."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from swamp.datastore.base import Datastore
from swamp.datastore.sync.localonly import is_local_only
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import LeaseLostError, NotFoundError, SwampError
from swamp.util import tracing

if TYPE_CHECKING:
    from swamp.repo.context import Repo


class CachedDatastore(Datastore):
    def __init__(self, root: Path, engine, *, kind: str, location: str, namespace: str) -> None:
        super().__init__(root, held=engine.held)  # one record of held leases, shared with the engine
        self.engine = engine
        self.kind = kind
        self.location = location
        self.namespace = namespace
        #: the whole command works from the cache (--offline)
        self.offline = False
        self.last_counts = SyncCounts()
        #: called before every pull, before it can replace a file (managed
        #: config records the version each document was pulled as)
        self.before_pull: Callable[[], None] | None = None
        from swamp.datastore.shared_pull import SharedPull

        #: what reads pull through: reads at once (serve's threads) share one pull (shared_pull.py)
        self.read_pull = SharedPull(self._pull_now)

    @classmethod
    def from_config(cls, repo: Repo, cfg, rules) -> "CachedDatastore":
        """``rules``: how each path syncs (sync.rules.PathRules), declared
        by the paths' owners and assembled above this package."""
        from swamp.datastore.objectstore.factory import open_store
        from swamp.datastore.sync.engine import SyncEngine

        store = open_store(store_config(cfg))
        engine = SyncEngine(store, repo.local_dir, rules=rules, namespace=cfg.namespace, hydration=cfg.hydration)
        return cls(repo.local_dir, engine, kind=cfg.type, location=location_of(cfg), namespace=cfg.namespace)

    # ------------------------------------------------------ change tracking
    def _mark_dirty(self, rel: str) -> None:
        if not is_local_only(rel):
            self.engine.mark_dirty(rel)

    # ------------------------------------------------------ lazy hydration
    def read_bytes(self, rel: str) -> bytes:
        try:
            return super().read_bytes(rel)
        except NotFoundError:
            if not is_local_only(rel) and self.engine.hydrate(rel):
                return super().read_bytes(rel)
            raise

    @contextlib.contextmanager
    def editing(self, rel: str) -> Iterator[None]:
        # The cache's sync lock: pulls (which could replace the document
        # between the read and the write) and other processes' edits wait.
        with super().editing(rel), self.engine.exclusive():
            yield

    # ---------------------------------------------------------------- locks
    def _acquire(self, name: str, timeout_ms: int | None, cancelled: threading.Event | None):
        return self.engine.lease(name, timeout_ms=timeout_ms, cancelled=cancelled)

    def lock_status(self) -> list[dict]:
        return self.engine.lease_status()

    def force_release(self, name: str) -> bool:
        return self.engine.force_release_lease(name)

    # ------------------------------------------------------------ lifecycle
    # The engine serializes sync steps of every process sharing this cache
    # (an flock on .sync/lock), so no second local lock is needed here.
    def _pull(self, counts: SyncCounts) -> None:
        counts.add(self._pull_now())

    def _pull_now(self) -> SyncCounts:
        if self.before_pull is not None:
            self.before_pull()
        with tracing.span("swamp.sync.pull") as s:
            return s.counts(self.engine.pull())

    def _push(self, counts: SyncCounts, command: str) -> None:
        with tracing.span("swamp.sync.push", command=command) as s:
            counts.add(s.counts(self.engine.push(command=command)))

    @contextlib.contextmanager
    def session(self, *, mutating: bool, locks: Sequence[str] = (), command: str = "",
                offline: bool = False) -> Iterator[SyncCounts]:
        counts = SyncCounts()
        offline = offline or self.offline
        if offline and locks:
            raise SwampError("this command takes leases on the shared datastore, which --offline cannot do",
                             code="offline", hint="run it without --offline")
        with contextlib.ExitStack() as stack:
            for name in sorted(set(locks)):
                stack.enter_context(self.lock(name))
            if not offline:
                if mutating:
                    self._pull(counts)
                else:
                    counts.add(self.read_pull.pull())
            try:
                yield counts
            except LeaseLostError:
                raise  # publish nothing: the engine took back what was written under it
            except Exception:
                # What the command wrote before failing is kept: publish it.
                if mutating and not offline:
                    self._push(counts, command)
                raise
            if mutating and not offline:
                self._push(counts, command)
        self.last_counts = counts

    def sync(self, *, pull: bool = True, push: bool = True, progress=None) -> SyncCounts:
        if pull and self.before_pull is not None:
            self.before_pull()
        with self.reporting(progress), tracing.span("swamp.sync", pull=pull, push=push) as s:
            if pull and push:
                return s.counts(self.engine.sync(command="datastore sync"))
            return s.counts(self.engine.pull() if pull
                            else self.engine.push(command="datastore sync", wait_for_leases=True))

    @contextlib.contextmanager
    def reporting(self, progress):
        """Route the engine's transfer progress to ``progress`` meanwhile."""
        previous = getattr(self.engine, "on_progress", None)
        self.engine.on_progress = progress
        try:
            yield
        finally:
            self.engine.on_progress = previous

    def status(self) -> dict:
        engine = self.engine.status()
        dirty = sorted(engine.pop("dirtyFiles"))
        return {"type": self.kind, "location": self.location, "namespace": self.namespace,
                "cache": str(self.root), **engine, "dirtyFiles": len(dirty), "dirtyPaths": dirty}


def store_config(cfg) -> dict:
    out = {"type": cfg.type, "bucket": cfg.bucket, "prefix": cfg.prefix, "endpoint_url": cfg.endpointUrl}
    if cfg.type == "s3":
        out["region"] = cfg.region
    network_timeout = getattr(cfg, "networkTimeout", None)
    if network_timeout:  # connecting and the first byte of each answer (docs/sync.md "Timeouts")
        out["connect_timeout_s"] = out["response_timeout_s"] = float(network_timeout)
    return out


def location_of(cfg) -> str:
    scheme = "s3" if cfg.type == "s3" else "gs"
    prefix = f"/{cfg.prefix.strip('/')}" if cfg.prefix.strip("/") else ""
    return f"{scheme}://{cfg.bucket}{prefix}"
