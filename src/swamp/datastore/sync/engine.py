"""The sync engine: one local cache directory <-> ``<namespace>/`` in an
object store, by the protocol in SYNC.md.

Pull lists the log after ``head`` and applies each path's net change where
the local file still equals its base (pull.py); push uploads the blobs of
changed files (transfers.py) and creates ``log/head+1``, the single commit
point, rebasing on a lost race (commit.py). Every operation returns honest
SyncCounts.

Leases fence what is published: every path a thread marks dirty while it
holds leases is recorded against them, every commit first checks that the
leases held are still ours, and what was written under a lease found lost
is quarantined (see ``fencing.py``): never published, kept aside locally.

Conflicts never stop the safe part: pull, push and sync finish and record
everything that can be applied, then raise SyncConflictError (exit 1) whose
``counts`` lists each conflict. Concurrent operations on one cache (threads or
processes) are serialized by ``.sync/lock``; peers never wait on each other
except through the commit race and the per-model leases.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Iterator

from swamp.datastore.objectstore.base import ObjectStore
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import (CorruptRemoteError, ObjectNotFound, PreconditionFailed, SwampError,
                          SyncConflictError, ValidationError)
from swamp.util import clock
from swamp.util.ids import hostname, uuid4_hex
from swamp.util.names import check_rel_path

from . import checkpoint, commitlog
from .blobs import fetch_blob
from .commit import Committer, _Contended
from .counting import Session
from .fencing import Fencing, _LeaseScope
from .gc import DEFAULT_GRACE_S, gc
from .held import HeldLocks
from .history import history, verify
from .journal import BULK, Journal
from .commitlog import INLINE_MAX
from .layout import FORMAT_VERSION, INLINE_FORMAT, Layout
from .lease import Lease, lease_status
from .localonly import is_synced
from .localtree import BlockedPath, LocalTree
from .pool import Pool
from .progress import ProgressHook
from .origin import Origin
from .publishing import Publishing
from .pull import Puller
from .rules import NO_RULES, PathRules
from .state import Base, SyncState
from .transfers import Transfers

_PEER_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class SyncEngine(Puller, Committer, Transfers, Fencing, Publishing, Origin):
    """The entry point: pull, push, sync, status, hydrate, lease, log,
    verify, gc. Each idea lives in its own module (pull.py, commit.py,
    transfers.py, fencing.py); this class holds the state they share and
    serializes operations on the cache."""

    #: ``on_progress(phase, files_done, files_total, bytes_done, bytes_total)``
    #: during the transfers of pull ("download") and push ("upload"); see
    #: progress.py for the exact contract.
    on_progress: ProgressHook | None = None

    def __init__(self, store: ObjectStore, cache_root: Path, *, rules: PathRules = NO_RULES, namespace: str = "default",
                 peer: str | None = None, concurrency: int = 16, checkpoint_every: int = 100,
                 hydration: str = "full", inline_max: int = INLINE_MAX) -> None:
        if hydration not in ("full", "lazy"):
            raise ValidationError(f"hydration must be 'full' or 'lazy', not {hydration!r}")
        self.store = store
        self.root = Path(cache_root).absolute()
        self.layout = Layout(namespace)
        self.hydration = hydration
        #: how each path syncs, as declared by the paths' owners (assembled
        #: by swamp.repo.datastores.path_rules); none: every path is OTHER
        self.rules = rules
        self.checkpoint_every = max(1, checkpoint_every)
        #: files up to this size travel inline in the commit record (0: never)
        self.inline_max = inline_max
        sync_dir = self.root / ".sync"
        sync_dir.mkdir(parents=True, exist_ok=True)
        self.state = SyncState(sync_dir / "state.db")
        self.peer = peer or self.state.get_meta("peer") or _default_peer()
        if not _PEER_RE.match(self.peer):
            raise ValidationError(f"invalid peer name {self.peer!r}", hint="use letters, digits, '_', '.', '-'")
        if self.state.get_meta("peer") != self.peer:
            self.state.set_meta("peer", self.peer)
        self.journal = Journal(sync_dir)
        self.tree = LocalTree(self.root, self.state)
        self._pool = Pool(max(1, concurrency), thread_name_prefix="sync")
        self._lock_path = sync_dir / "lock"
        self._mutex = threading.RLock()
        self._depth = 0
        self._lock_fd = -1
        self._leases: dict[Lease, _LeaseScope] = {}
        self._leases_mutex = threading.Lock()
        #: the one record of the locks held in this process (the cached
        #: datastore's lock() shares it): which leases a thread writes under
        self.held = HeldLocks()
        self._current: tuple[int, float] | None = None  # (head, monotonic) the log was seen to continue from
        #: paths a pull renumbered (renumber.py): a push pulling mid-way looks at them too
        self.renumbered: set[str] = set()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.state.close()

    def __enter__(self) -> "SyncEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """One sync operation at a time on this cache, across threads and
        processes (flock dies with its process, so kill -9 never leaves it)."""
        with self._mutex:
            if self._depth == 0:
                fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._lock_fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    os.close(self._lock_fd)
                    self._lock_fd = -1

    def exclusive(self):
        """Hold every sync step of this cache off (pulls and pushes, in every
        process) meanwhile: what a read-modify-write of a document needs so
        that no pull replaces it between the read and the write."""
        return self._exclusive()

    def _session(self) -> Session:
        return Session(self.store)

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
            self._record_under_leases("")
            self.journal.append(BULK)
            return
        check_rel_path(rel)
        if not is_synced(rel):
            return
        self._record_under_leases(rel)
        if self.hydration == "lazy":
            # From now on the local file (or its absence) is the truth, not
            # "not fetched yet".
            self.state.mark_hydrated(rel)
        self.journal.append(rel)

    def pull(self) -> SyncCounts:
        with self._exclusive():
            s = self._session()
            self._pull_into(s)
            return self._finish(s)

    def push(self, command: str = "", *, full_walk: bool = False, wait_for_leases: bool = False) -> SyncCounts:
        """Publish local changes. ``full_walk`` ignores the journal and looks
        at every file (for caches written without ``mark_dirty``). New
        versions are published under their lease, taken first if need be
        (publishing.py): waiting for it with ``wait_for_leases``, else
        trying once (one busy elsewhere waits for the next push)."""
        with self._publishing(full_walk, wait_for_leases), self._exclusive():
            s = self._session()
            self._push_into(s, command, full_walk)
            return self._finish(s)

    def sync(self, command: str = "") -> SyncCounts:
        """Pull, then push; the leases of new versions are waited for, as a
        run waits (publishing.py)."""
        with self._publishing(False, True), self._exclusive():
            s = self._session()
            # Its commit may build on this very pull, unless the pull brought
            # commits (their downloads came after its LIST): then on a fresh LIST.
            since = self._pull_fresh(s, time.monotonic())
            self._push_into(s, command, False, since)
            return self._finish(s)

    def status(self) -> dict:
        taken = self.journal.peek()
        cands = self._candidates(taken.paths, taken.bulk or not self.state.tracking)
        conflicts = []
        for saved, path, seq in self.state.conflicts():
            if self.tree.abspath(saved).exists():
                conflicts.append({"path": path, "savedAs": saved, "seq": seq})
            else:
                self.state.drop_conflict(saved)  # the user dealt with it
        return {
            "head": self.state.head, "peer": self.peer, "namespace": self.layout.namespace,
            "store": self.store.name, "hydration": self.hydration,
            "dirtyFiles": [c.path for c in self._diff(cands)], "conflicts": conflicts,
        }

    def init_remote(self) -> None:
        """Write ``format.json`` create-only; idempotent. Refuses a remote
        written by a newer protocol."""
        self._ensure_format(self.store, create=True)

    def hydrate(self, rel: str) -> bool:
        """Fetch a lazily pulled file on first read. True if the file is now
        on disk with its committed content."""
        check_rel_path(rel)
        with self._exclusive():
            base = self.state.base(rel)
            if base is None:
                return False
            if base.hydrated:
                return self.tree.abspath(rel).is_file()
            if not base.src and self._streamed(base.size):
                placed, blocked = self._place_blob(self._session(), base.sha256, base.size, [rel], None)
                if blocked:
                    return False  # a local directory (or file) is in the way: reported when pulled
                st = placed[0][1]
            else:
                data = self._content(self._session(), rel, base)
                try:
                    st = self.tree.write(rel, data)
                except BlockedPath:
                    return False  # a local directory (or file) is in the way: reported when pulled
            self.tree.remember(rel, st, base.sha256)
            with self.state.transaction():
                self.state.set_base(rel, base.sha256, base.size, src=base.src)
                self.tree.flush_stats()
            return True

    def lease_status(self) -> list[dict]:
        return lease_status(self.store, self.layout)

    def force_release_lease(self, name: str) -> bool:
        return self._break_lease(name)  # fencing.py: the broken holding is fenced in the log

    def log(self, limit: int | None = None) -> list[dict]:
        """The team's history, newest first: who changed what, when."""
        return history(self.store, self.layout, self._pool, limit)

    def verify(self) -> dict:
        """Every referenced blob exists and matches its hash; the log has no
        gaps. ``{"ok", "commits", "checkpoints", "blobs", "errors"}``."""
        return verify(self.store, self.layout, self._pool)

    def committed_content(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` as last committed (its base), whatever the
        local file holds now; None when it was never committed."""
        check_rel_path(rel)
        with self._exclusive():
            base = self.state.base(rel)
            return None if base is None else self._content(self._session(), rel, base)

    def gc(self, retention_days: float = 30, *, grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False) -> dict:
        """Trim commits outside the window and sweep blobs marked
        unreferenced at least ``grace_s`` ago (see gc.py)."""
        return gc(self.store, self.layout, self._pool, retention_days=retention_days, grace_s=grace_s,
                  dry_run=dry_run)

    # ============================================================ internals
    def _ensure_format(self, store: ObjectStore, *, create: bool) -> None:
        """Check (or, with ``create``, write) ``format.json``; remembers the
        remote's format, which decides whether contents may go inline."""
        try:
            if create:
                store.put(self.layout.format_key, _format_body(), if_none_match=True)
                self.state.set_meta("format", str(FORMAT_VERSION))
                return
            data, _ = store.get(self.layout.format_key)
        except PreconditionFailed:
            data, _ = store.get(self.layout.format_key)
        except ObjectNotFound:
            return  # a log without format.json was written by a first push racing setup
        self.state.set_meta("format", str(self._format_version(data)))

    def _format_version(self, data: bytes) -> int:
        """The version ``format.json`` names; one newer than this swamp's is refused."""
        try:
            version = int(json.loads(data)["version"])
        except (ValueError, KeyError, TypeError):
            raise CorruptRemoteError(f"{self.layout.format_key} is malformed") from None
        if version > FORMAT_VERSION:
            raise SwampError(
                f"the remote datastore uses sync format {version}; this swamp understands {FORMAT_VERSION}",
                hint="upgrade swamp", code="format_too_new")
        return version

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
        with self._exclusive():
            s = self._session()
            while True:
                try:
                    data, etag = s.get(self.layout.format_key)
                except ObjectNotFound:
                    raise SwampError(f"{self.store.name}{self.layout.namespace} has no {self.layout.format_key}",
                                     hint="set it up first with 'swamp datastore setup s3|gcs ...'",
                                     code="not_found") from None
                version = self._format_version(data)
                if version >= INLINE_FORMAT:
                    self._saw_upgrade(version)
                    return {"from": version, "to": version, "upgraded": False, "seq": None,
                            "sync": s.counts.to_json()}
                self._pull_into(s)
                seq = None
                if int(self.state.get_meta("format") or 0) < INLINE_FORMAT:
                    try:
                        seq = self._append_record("datastore upgrade", upgrade=FORMAT_VERSION)
                    except _Contended:
                        raise SwampError("could not append the upgrade record: the datastore is very busy",
                                         hint="try again", code="push_contended") from None
                try:
                    s.put(self.layout.format_key, _format_body(), if_match=etag)
                except PreconditionFailed:
                    continue  # format.json changed meanwhile (another upgrade): look again
                self._saw_upgrade(FORMAT_VERSION)
                # (what its pull brought, conflicts included, is in "sync")
                return {"from": version, "to": FORMAT_VERSION, "upgraded": True, "seq": seq,
                        "sync": s.counts.to_json()}

    def _saw_upgrade(self, version: int) -> None:
        """The remote is of format ``version`` at least (never lowered)."""
        if version > int(self.state.get_meta("format") or 0):
            self.state.set_meta("format", str(version))

    def _inline_allowed(self, s: Session) -> bool:
        """Whether this remote's readers take contents inline (its format is
        read once, then remembered)."""
        if self.inline_max <= 0:
            return False
        if self.state.get_meta("format") is None:
            self._ensure_format(s, create=False)
        return int(self.state.get_meta("format") or 0) >= INLINE_FORMAT

    def _content(self, s: Session, rel: str, base: Base) -> bytes:
        """The committed content of ``rel`` (its base): its blob, or the
        record that carries it inline; that commit trimmed by gc since, a
        later checkpoint carries it (CorruptRemoteError when none does any
        more: the path changed and the old content was trimmed)."""
        if not base.src:
            return fetch_blob(s, self.layout, base.sha256)
        kind, _, seq = base.src.partition(":")
        try:
            if kind == "log":
                commit = commitlog.fetch_one(s, self.layout, int(seq))
                data = next((c.inline for c in commit.changes if c.sha256 == base.sha256 and c.inline is not None),
                            None)
                if data is not None:
                    s.add(bytesPulled=len(data))
                    return data
        except CorruptRemoteError:
            pass  # trimmed: a checkpoint carries it
        for ck in reversed(checkpoint.seqs(s, self.layout)):
            try:
                tree, _rejected = checkpoint.fetch(s, self.layout, ck)
            except CorruptRemoteError:
                continue  # trimmed meanwhile
            entry = tree.get(rel)
            if entry is not None and entry[0] == base.sha256 and entry[2] is not None:
                s.add(bytesPulled=len(entry[2]))
                return entry[2]
        raise CorruptRemoteError(f"the content of {rel} ({base.sha256}) is in no record of {s.name} any more",
                                 hint="run 'swamp datastore verify'")


def _default_peer() -> str:
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", hostname())[:40] or "peer"
    return f"{host}-{uuid4_hex()[:8]}"


def _format_body() -> bytes:
    return json.dumps({"format": "swamp-sync", "version": FORMAT_VERSION, "createdAt": clock.isoformat()}).encode()
