"""The sync engine: one local cache directory <-> ``<namespace>/`` in an
object store, by the protocol in SYNC.md.

Pull lists the log after ``head`` and applies each path's net change where
the local file still equals its base (pull.py, applying.py); push uploads
the blobs of changed files (transfers.py) and creates ``log/head+1``, the
single commit point, rebasing on a lost race (commit.py). Every operation
returns honest SyncCounts.

Leases fence what is published: every path a thread marks dirty while it
holds leases is recorded against them, every commit first checks that the
leases held are still ours, and what was written under a lease found lost
is quarantined (see ``fencing.py``): never published, kept aside locally.

Conflicts never stop the safe part: pull, push and sync finish and record
everything that can be applied, then raise SyncConflictError (exit 1) whose
``counts`` lists each conflict. Concurrent operations on one cache (threads or
processes) are serialized by ``.sync/lock``; peers never wait on each other
except through the commit race and the per-model leases.

``SyncEngine`` is the front of collaborators, each an object handed the
shared ``EngineState`` (engine_state.py) and the collaborators it calls,
through their public methods only; this module wires them together."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from pathlib import Path
from typing import Iterator

from swamp.datastore.objectstore.base import ObjectStore
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ObjectNotFound, PreconditionFailed, SwampError, ValidationError
from swamp.util.ids import hostname, uuid4_hex
from swamp.util.names import check_rel_path

from .changes import LocalChanges
from .checkpoint_writer import CheckpointWriter
from .commit import Committer
from .commitlog import INLINE_MAX
from .contents import committed_content
from .counting import Session
from .engine_state import CacheLock, EngineState
from .errors import SyncConflictError
from .fencing import Fencing
from .gc import DEFAULT_GRACE_S, gc
from .history import history, verify
from .journal import BULK, Journal
from .layout import FORMAT_VERSION, INLINE_FORMAT, Layout
from .lease import DEFAULT_TTL_MS, Lease, lease_status
from .localonly import is_synced
from .localtree import BlockedPath, LocalTree
from .origin import Origin
from .pool import Pool
from .progress import ProgressHook
from .publishing import Publishing
from .pull import Puller
from .quarantine import TakeBack
from .records import Contended, Records
from .remote_format import RemoteFormat, format_body
from .rules import NO_RULES, PathRules
from .state import SyncState
from .transfers import Transfers

_PEER_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class SyncEngine:
    """The entry point: pull, push, sync, status, hydrate, lease, log,
    verify, gc. Each idea lives in its own collaborator (see the module
    docstring); this class builds them and serializes operations on the
    cache."""

    def __init__(self, store: ObjectStore, cache_root: Path, *, rules: PathRules = NO_RULES, namespace: str = "default",
                 peer: str | None = None, concurrency: int = 16, checkpoint_every: int = 100,
                 hydration: str = "full", inline_max: int = INLINE_MAX) -> None:
        if hydration not in ("full", "lazy"):
            raise ValidationError(f"hydration must be 'full' or 'lazy', not {hydration!r}")
        root = Path(cache_root).absolute()
        sync_dir = root / ".sync"
        sync_dir.mkdir(parents=True, exist_ok=True)
        state = SyncState(sync_dir / "state.db")
        peer = peer or state.get_meta("peer") or _default_peer()
        if not _PEER_RE.match(peer):
            raise ValidationError(f"invalid peer name {peer!r}", hint="use letters, digits, '_', '.', '-'")
        if state.get_meta("peer") != peer:
            state.set_meta("peer", peer)
        #: what every collaborator shares (engine_state.py)
        self.ctx = ctx = EngineState(
            store=store, root=root, layout=Layout(namespace), state=state, tree=LocalTree(root, state),
            journal=Journal(sync_dir), rules=rules, pool=Pool(max(1, concurrency), thread_name_prefix="sync"),
            lock=CacheLock(sync_dir / "lock"), peer=peer, hydration=hydration,
            checkpoint_every=max(1, checkpoint_every), inline_max=inline_max)
        # the collaborators, each built after those it calls; the fencing
        # appends its epoch records through the records, built after it
        self.formats = RemoteFormat(ctx)
        self.changes = LocalChanges(ctx)
        self.transfers = Transfers(ctx)
        self.fencing = Fencing(ctx, self.changes, TakeBack(ctx, self.changes, self.transfers),
                               append_fence=lambda *a, **kw: self.records.append_fence(*a, **kw))
        self.origin = Origin(ctx)
        self.publishing = Publishing(ctx, self.fencing, self.changes, self.origin)
        self.puller = Puller(ctx, self.formats, self.transfers, self.fencing)
        self.records = Records(ctx, self.puller, self.fencing, self.formats, CheckpointWriter(ctx))
        self.committer = Committer(ctx, self.changes, self.puller, self.transfers, self.fencing, self.publishing,
                                   self.records, self.formats)
        # what callers and tests of the engine read (the same objects as ctx's)
        self.store, self.root, self.layout, self.rules = store, root, ctx.layout, rules
        self.state, self.peer, self.tree, self.journal = state, peer, ctx.tree, ctx.journal
        self.hydration, self.held, self._pool = hydration, ctx.held, ctx.pool

    #: ``on_progress(phase, files_done, files_total, bytes_done, bytes_total)``
    #: during the transfers of pull ("download") and push ("upload"); see
    #: progress.py for the exact contract.
    @property
    def on_progress(self) -> ProgressHook | None:
        return self.ctx.on_progress

    @on_progress.setter
    def on_progress(self, hook: ProgressHook | None) -> None:
        self.ctx.on_progress = hook

    #: whether files above SMALL_FILE stream (False: bench/sync_large_bench.py's baseline)
    @property
    def stream_large(self) -> bool:
        return self.ctx.stream_large

    @stream_large.setter
    def stream_large(self, on: bool) -> None:
        self.ctx.stream_large = on

    def close(self) -> None:
        self.ctx.pool.shutdown(wait=True)
        self.state.close()

    def __enter__(self) -> "SyncEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def exclusive(self):
        """Hold every sync step of this cache off (pulls and pushes, in every
        process) meanwhile: what a read-modify-write of a document needs so
        that no pull replaces it between the read and the write."""
        return self.ctx.exclusive()

    def _finish(self, s: Session) -> SyncCounts:
        s.counts.head = self.state.head
        if s.counts.conflicts:
            raise SyncConflictError(s.counts)
        return s.counts

    # ================================================================== API
    def mark_dirty(self, rel: str) -> None:
        """Call BEFORE every local write or delete of ``rel`` (a file or a
        directory; "" means everything)."""
        if rel in ("", "."):
            self.fencing.record_under_leases("")
            self.journal.append(BULK)
            return
        check_rel_path(rel)
        if not is_synced(rel):
            return
        self.fencing.record_under_leases(rel)
        if self.hydration == "lazy":
            # From now on the local file (or its absence) is the truth, not
            # "not fetched yet".
            self.state.mark_hydrated(rel)
        self.journal.append(rel)

    def pull(self) -> SyncCounts:
        with self.ctx.exclusive():
            s = self.ctx.session()
            self.puller.pull_into(s)
            return self._finish(s)

    def push(self, command: str = "", *, full_walk: bool = False, wait_for_leases: bool = False) -> SyncCounts:
        """Publish local changes. ``full_walk`` ignores the journal and looks
        at every file (for caches written without ``mark_dirty``). New
        versions are published under their lease, taken first if need be
        (publishing.py): waiting for it with ``wait_for_leases``, else
        trying once (one busy elsewhere waits for the next push)."""
        with self.publishing.publishing(full_walk, wait_for_leases), self.ctx.exclusive():
            s = self.ctx.session()
            self.committer.push_into(s, command, full_walk)
            return self._finish(s)

    def sync(self, command: str = "") -> SyncCounts:
        """Pull, then push; the leases of new versions are waited for, as a
        run waits (publishing.py)."""
        with self.publishing.publishing(False, True), self.ctx.exclusive():
            s = self.ctx.session()
            # Its commit may build on this very pull, unless the pull brought
            # commits (their downloads came after its LIST): then on a fresh LIST.
            since = self.puller.pull_fresh(s, time.monotonic())
            self.committer.push_into(s, command, False, since)
            return self._finish(s)

    def status(self) -> dict:
        taken = self.journal.peek()
        cands = self.changes.candidates(taken.paths, taken.bulk or not self.state.tracking)
        conflicts = []
        for saved, path, seq in self.state.conflicts():
            if self.tree.abspath(saved).exists():
                conflicts.append({"path": path, "savedAs": saved, "seq": seq})
            else:
                self.state.drop_conflict(saved)  # the user dealt with it
        return {
            "head": self.state.head, "peer": self.peer, "namespace": self.layout.namespace,
            "store": self.store.name, "hydration": self.hydration,
            "dirtyFiles": [c.path for c in self.changes.diff(cands)], "conflicts": conflicts,
        }

    def init_remote(self) -> None:
        """Write ``format.json`` create-only; idempotent. Refuses a remote
        written by a newer protocol."""
        self.formats.ensure(self.store, create=True)

    def hydrate(self, rel: str) -> bool:
        """Fetch a lazily pulled file on first read. True if the file is now
        on disk with its committed content."""
        check_rel_path(rel)
        with self.ctx.exclusive():
            base = self.state.base(rel)
            if base is None:
                return False
            if base.hydrated:
                return self.tree.abspath(rel).is_file()
            if not base.src and self.ctx.streamed(base.size):
                placed, blocked = self.transfers.place_blob(self.ctx.session(), base.sha256, base.size, [rel], None)
                if blocked:
                    return False  # a local directory (or file) is in the way: reported when pulled
                st = placed[0][1]
            else:
                data = committed_content(self.ctx.session(), self.layout, rel, base)
                try:
                    st = self.tree.write(rel, data)
                except BlockedPath:
                    return False  # a local directory (or file) is in the way: reported when pulled
            self.tree.remember(rel, st, base.sha256)
            with self.state.transaction():
                self.state.set_base(rel, base.sha256, base.size, src=base.src)
                self.tree.flush_stats()
            return True

    @contextlib.contextmanager
    def lease(self, name: str, *, ttl_ms: int = DEFAULT_TTL_MS, timeout_ms: int | None = None,
              cancelled: threading.Event | None = None) -> Iterator[Lease]:
        """Hold lease ``name`` (``Fencing.lease``: what is written under it
        is published only while it is ours; a set ``cancelled`` ends the wait)."""
        with self.fencing.lease(name, ttl_ms=ttl_ms, timeout_ms=timeout_ms, cancelled=cancelled) as held:
            yield held

    def lease_status(self) -> list[dict]:
        return lease_status(self.store, self.layout)

    def force_release_lease(self, name: str) -> bool:
        return self.fencing.break_lease(name)  # the broken holding is fenced in the log

    def attach_remote(self) -> bool:
        return self.origin.attach_remote()

    def set_aside_copies(self) -> dict:
        return self.origin.set_aside_copies()

    def log(self, limit: int | None = None) -> list[dict]:
        """The team's history, newest first: who changed what, when."""
        return history(self.store, self.layout, self.ctx.pool, limit)

    def verify(self) -> dict:
        """Every referenced blob exists and matches its hash; the log has no
        gaps. ``{"ok", "commits", "checkpoints", "blobs", "errors"}``."""
        return verify(self.store, self.layout, self.ctx.pool)

    def committed_content(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` as last committed (its base), whatever the
        local file holds now; None when it was never committed."""
        check_rel_path(rel)
        with self.ctx.exclusive():
            base = self.state.base(rel)
            return None if base is None else committed_content(self.ctx.session(), self.layout, rel, base)

    def gc(self, retention_days: float = 30, *, grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False) -> dict:
        """Trim commits outside the window and sweep blobs marked
        unreferenced at least ``grace_s`` ago (see gc.py)."""
        return gc(self.store, self.layout, self.ctx.pool, retention_days=retention_days, grace_s=grace_s,
                  dry_run=dry_run)

    def upgrade_format(self) -> dict:
        """Move a remote of sync format 1 to this swamp's format, so that
        contents travel inline there too. In order, each step safe to
        repeat: pull; append an upgrade record to the log (unless the log
        has one already), whose one entry has an op no older swamp knows, so
        every older reader refuses the log from there on as malformed,
        naming the upgrade, before applying anything; then rewrite
        ``format.json`` (compare-and-swap), so an older swamp starting
        afresh is refused as ``format_too_new``. Every peer of this version
        inlines once it has pulled the record. ``{"from", "to", "upgraded",
        "seq", "sync"}`` (``seq``: the upgrade record's, None if none was
        needed; ``sync``: the SyncCounts of its pull and record)."""
        with self.ctx.exclusive():
            s = self.ctx.session()
            while True:
                try:
                    data, etag = s.get(self.layout.format_key)
                except ObjectNotFound:
                    raise SwampError(f"{self.store.name}{self.layout.namespace} has no {self.layout.format_key}",
                                     hint="set it up first with 'swamp datastore setup s3|gcs ...'",
                                     code="not_found") from None
                version = self.formats.version_of(data)
                if version >= INLINE_FORMAT:
                    self.formats.saw_upgrade(version)
                    return {"from": version, "to": version, "upgraded": False, "seq": None,
                            "sync": s.counts.to_json()}
                self.puller.pull_into(s)
                seq = None
                if self.formats.known() < INLINE_FORMAT:
                    try:
                        seq = self.records.append_record("datastore upgrade", upgrade=FORMAT_VERSION)
                    except Contended:
                        raise SwampError("could not append the upgrade record: the datastore is very busy",
                                         hint="try again", code="push_contended") from None
                try:
                    s.put(self.layout.format_key, format_body(), if_match=etag)
                except PreconditionFailed:
                    continue  # format.json changed meanwhile (another upgrade): look again
                self.formats.saw_upgrade(FORMAT_VERSION)
                # (what its pull brought, conflicts included, is in "sync")
                return {"from": version, "to": FORMAT_VERSION, "upgraded": True, "seq": seq,
                        "sync": s.counts.to_json()}


def _default_peer() -> str:
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", hostname())[:40] or "peer"
    return f"{host}-{uuid4_hex()[:8]}"
