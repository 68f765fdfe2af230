"""The sync engine: one local cache directory <-> ``<namespace>/`` in an
object store, by the protocol in SYNC.md.

Pull lists the log after ``head`` and applies each path's net change where
the local file still equals its base; push uploads the blobs of changed
files and creates ``log/head+1``, the single commit point, rebasing on a lost
race. Every operation returns honest SyncCounts.

Leases fence what is published: every path a thread marks dirty while it
holds leases is recorded against them, every commit first checks that the
leases held are still ours, and what was written under a lease found lost
is quarantined (see ``_quarantine``): never published, kept aside locally.

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
import logging
import os
import random
import re
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from swamp.datastore.sync.counts import SyncCounts
from swamp.datastore.objectstore.base import ObjectNotFound, ObjectStore, ObjectStoreError, PreconditionFailed
from swamp.errors import LeaseLostError, SwampError, ValidationError
from swamp.util import clock
from swamp.util.atomic import DurableBatch
from swamp.util.ids import hostname
from swamp.util.names import check_rel_path

from . import checkpoint, commitlog
from .blobs import fetch_blob, upload_blob
from .commitlog import Change, Commit
from .conflicts import Incoming, Resolver
from .counting import Session
from .errors import CorruptRemoteError, SyncConflictError
from .gc import DEFAULT_GRACE_S, gc, protect
from .history import history, verify
from .journal import BULK, Journal
from .layout import FORMAT_VERSION, Layout
from .lease import DEFAULT_TTL_MS, Lease, force_release, lease_status
from .localtree import BlockedPath, FileState, LocalTree
from .localonly import is_synced
from .rules import NO_RULES, PathRules
from .progress import Progress, ProgressHook
from .state import Base, SyncState

log = logging.getLogger(__name__)

MAX_COMMIT_ATTEMPTS = 25
#: a push commits at head+1 only if this engine saw the log continue from
#: head this recently; otherwise it pulls first (see _head_is_current)
HEAD_CURRENT_S = 600.0
#: a push reads and hashes files up to this size itself, ahead of the pool's
#: uploads; larger ones each in a pool thread
SMALL_FILE = 256 << 10
#: bytes of small files read ahead of their uploads, at most
READ_AHEAD_BYTES = 64 << 20
_PEER_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _sha(x: FileState | Base | Change | None) -> str | None:
    """Content identity of a local file, a base or a change (None = absent)."""
    if x is None or (isinstance(x, Change) and x.op == "delete"):
        return None
    return x.sha256


class SyncEngine:
    #: ``on_progress(phase, files_done, files_total, bytes_done, bytes_total)``
    #: during the transfers of pull ("download") and push ("upload"); see
    #: progress.py for the exact contract.
    on_progress: ProgressHook | None = None

    def __init__(self, store: ObjectStore, cache_root: Path, *, rules: PathRules = NO_RULES, namespace: str = "default",
                 peer: str | None = None, concurrency: int = 16, checkpoint_every: int = 100,
                 hydration: str = "full") -> None:
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
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="sync")
        self._lock_path = sync_dir / "lock"
        self._mutex = threading.RLock()
        self._depth = 0
        self._lock_fd = -1
        self._leases: dict[Lease, _LeaseScope] = {}
        self._leases_mutex = threading.Lock()
        self._here = threading.local()  # .held: the leases this thread holds, innermost last
        self._current: tuple[int, float] | None = None  # (head, monotonic) the log was seen to continue from

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

    def push(self, command: str = "", *, full_walk: bool = False) -> SyncCounts:
        """Publish local changes. ``full_walk`` ignores the journal and looks
        at every file (for caches written without ``mark_dirty``)."""
        with self._exclusive():
            s = self._session()
            self._push_into(s, command, full_walk)
            return self._finish(s)

    def sync(self, command: str = "") -> SyncCounts:
        with self._exclusive():
            s = self._session()
            self._pull_into(s)
            self._push_into(s, command, False)
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
            data = fetch_blob(self._session(), self.layout, base.sha256)
            try:
                st = self.tree.write(rel, data)
            except BlockedPath:
                return False  # a local directory (or file) is in the way: reported when pulled
            self.tree.remember(rel, st, base.sha256)
            with self.state.transaction():
                self.state.set_base(rel, base.sha256, base.size)
                self.tree.flush_stats()
            return True

    @contextlib.contextmanager
    def lease(self, name: str, *, ttl_ms: int = DEFAULT_TTL_MS, timeout_ms: int | None = None) -> Iterator[Lease]:
        """Hold lease ``name`` (e.g. ``model/<type>/<id>``). LockTimeoutError
        (exit 75) names the holder.

        Every path this thread marks dirty meanwhile is recorded as written
        under the lease. Once it is lost (a failed heartbeat, the check
        before a commit, or a release that finds it taken over), nothing
        written under it is ever published: a push (by any thread) refuses
        to commit and quarantines those paths first, and so does leaving
        this block; a push by this thread, and leaving the block normally,
        raise LeaseLostError."""
        if not name:
            raise ValidationError("a lease needs a name")
        held = Lease(self.store, self.layout, name, peer=self.peer, ttl_ms=ttl_ms, timeout_ms=timeout_ms)
        held.acquire()
        with self._leases_mutex:
            self._leases[held] = _LeaseScope()
        stack = self._held_here()
        stack.append(held)
        failed = False
        try:
            yield held
        except BaseException:
            failed = True
            raise
        finally:
            stack.remove(held)
            try:
                held.release()
            finally:
                with self._exclusive():
                    if held.lost:
                        self._quarantine(self._session(), held)
                    with self._leases_mutex:
                        scope = self._leases.pop(held)
        if held.lost and not failed:
            raise _lost(held, scope)

    def _held_here(self) -> list[Lease]:
        try:
            return self._here.held
        except AttributeError:
            self._here.held = []
            return self._here.held

    def _record_under_leases(self, rel: str) -> None:
        held = getattr(self._here, "held", None)
        if held:
            with self._leases_mutex:
                for lease in held:
                    self._leases[lease].written.add(rel)

    def lease_status(self) -> list[dict]:
        return lease_status(self.store, self.layout)

    def force_release_lease(self, name: str) -> bool:
        return force_release(self.store, self.layout, name)

    def log(self, limit: int | None = None) -> list[dict]:
        """The team's history, newest first: who changed what, when."""
        return history(self.store, self.layout, self._pool, limit)

    def verify(self) -> dict:
        """Every referenced blob exists and matches its hash; the log has no
        gaps. ``{"ok", "commits", "checkpoints", "blobs", "errors"}``."""
        return verify(self.store, self.layout, self._pool)

    def gc(self, retention_days: float = 30, *, grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False) -> dict:
        """Trim commits outside the window and sweep blobs marked
        unreferenced at least ``grace_s`` ago (see gc.py)."""
        return gc(self.store, self.layout, self._pool, retention_days=retention_days, grace_s=grace_s,
                  dry_run=dry_run)

    # ============================================================ internals
    def _ensure_format(self, store: ObjectStore, *, create: bool) -> None:
        try:
            if create:
                store.put(self.layout.format_key, _format_body(), if_none_match=True)
                return
            data, _ = store.get(self.layout.format_key)
        except PreconditionFailed:
            data, _ = store.get(self.layout.format_key)
        except ObjectNotFound:
            return  # a log without format.json was written by a first push racing setup
        try:
            version = int(json.loads(data)["version"])
        except (ValueError, KeyError, TypeError):
            raise CorruptRemoteError(f"{self.layout.format_key} is malformed") from None
        if version > FORMAT_VERSION:
            raise SwampError(
                f"the remote datastore uses sync format {version}; this swamp understands {FORMAT_VERSION}",
                hint="upgrade swamp", code="format_too_new")

    def _local_view(self, rel: str, base: Base | None) -> tuple[FileState | None, bool]:
        """(what the path holds, whether that is only the not-yet-fetched base)."""
        cur = self.tree.current(rel)
        if cur is None and base is not None and not base.hydrated:
            return FileState(base.sha256, base.size), True
        return cur, False

    # ----------------------------------------------------------------- pull
    def _pull_into(self, s: Session) -> None:
        head = self.state.head
        seqs = commitlog.list_seqs(s, self.layout, head)
        if not seqs:
            self._current = (head, time.monotonic())
            return
        start, tree, rejected = head, None, []
        if head == 0:
            self._ensure_format(s, create=False)
        if head == 0 or seqs[0] != head + 1:
            # A new peer, or one the retention window left behind: start
            # from the newest checkpoint that the listed log continues.
            usable = [c for c in checkpoint.seqs(s, self.layout) if head < c <= seqs[-1] and c >= seqs[0] - 1]
            if usable:
                start = usable[-1]
                tree, rejected = checkpoint.fetch(s, self.layout, start)
        seqs = [q for q in seqs if q > start]
        commitlog.check_contiguous(seqs, start)
        commits = commitlog.fetch(s, self.layout, seqs, self._pool)

        incoming: dict[str, Incoming] = {}
        own: dict[str, Change] = {}
        if tree is not None:
            bases = self.state.all_bases()
            for path, (sha, size) in tree.items():
                b = bases.get(path)
                if b is None or b.sha256 != sha:
                    incoming[path] = Incoming(Change(path, "put", sha, size), start, "checkpoint")
            for path in bases.keys() - tree.keys():
                incoming[path] = Incoming(Change(path, "delete"), start, "checkpoint")
        pending = self.state.pending()
        for c in commits:
            rejected += c.rejected
            mine = c.id in pending
            for ch in c.changes:
                if mine:
                    # Our own commit from a push killed after its commit
                    # point: it becomes the base, whatever the disk holds now.
                    own[ch.path] = ch
                    incoming.pop(ch.path, None)
                else:
                    incoming[ch.path] = Incoming(ch, c.seq, c.peer)
        for path in rejected:
            s.conflict({"path": path, "reason": "invalid path in a remote record; not applied"})
        self._apply(s, incoming, own, commits[-1].seq if commits else start)
        self._current = (self.state.head, time.monotonic())

    def _apply(self, s: Session, incoming: dict[str, Incoming], own: dict[str, Change], last: int) -> None:
        lazy = self.hydration == "lazy"
        self.tree.forget_dirs()
        intents = self.state.intents()
        fetches: dict[str, list[str]] = {}
        removes: list[str] = []
        conflicted: list[tuple[str, Base | None, FileState | None, Incoming]] = []
        unhydrated: set[str] = set()
        new_base: dict[str, Change] = dict(own)
        bases = self.state.bases(rel for rel in incoming if rel not in own)
        for rel in sorted(incoming):
            inc = incoming[rel]
            theirs = inc.change
            new_base[rel] = theirs
            base = _own_base(own[rel]) if rel in own else bases.get(rel)
            local, virtual = self._local_view(rel, base)
            if _sha(local) == _sha(theirs):
                if virtual:
                    unhydrated.add(rel)
            elif _sha(local) == _sha(base) or _sha(local) in intents.get(rel, ()):
                if theirs.op == "delete":
                    removes.append(rel)
                elif lazy and self.rules.is_lazy(rel):
                    unhydrated.add(rel)
                    removes.append(rel)  # never leave the old content readable
                else:
                    fetches.setdefault(theirs.sha256, []).append(rel)
            else:
                conflicted.append((rel, base, local, inc))
        # Before the first byte hits the disk: say what we are about to write.
        self.state.add_intents([(rel, sha) for sha, rels in fetches.items() for rel in rels]
                               + [(rel, None) for rel in removes]
                               + [(rel, inc.change.sha256) for rel, _b, _l, inc in conflicted])

        # The pool downloads each blob and writes its files atomically, each
        # fsynced; their directories are fsynced once each, at the end,
        # before the state claims the files.
        batch = DurableBatch()
        sizes = {inc.change.sha256: inc.change.size for inc in incoming.values() if inc.change.op == "put"}
        progress = Progress(self.on_progress, "download", sum(map(len, fetches.values())),
                            sum(sizes[sha] * len(rels) for sha, rels in fetches.items()))

        def write_all(sha: str, data: bytes, rels: list[str], first: bool = False) -> list[str]:
            blocked = []
            for rel in rels:
                try:
                    st = self.tree.write(rel, data, batch)
                except BlockedPath:
                    blocked.append(rel)
                else:
                    self.tree.remember(rel, st, sha)
                    s.add(filesPulled=1)
                if first:
                    progress.advance(1, sizes[sha])
            return blocked

        def fetch_and_write(item: tuple[str, list[str]]) -> tuple[str, bytes, list[str]]:
            sha, rels = item
            data = fetch_blob(s, self.layout, sha)
            blocked = write_all(sha, data, rels, first=True)
            return sha, data if blocked else b"", blocked

        retry = [r for r in self._pool.map(fetch_and_write, fetches.items()) if r[2]]
        for rel in removes:
            if self.tree.abspath(rel).is_file():
                s.add(filesDeleted=1)
            self.tree.remove(rel, batch)
        # A file that a directory stood in the way of is written again once
        # this pull's deletes are done: they may have emptied it (a directory
        # replaced by a file elsewhere). One still in the way (a local
        # directory with files of ours, or a local file where its directory
        # must be) is committed but not here: its base is recorded as not
        # fetched, so it is neither received nor a local delete, a read
        # fetches it once the way is clear, and the conflict is reported.
        for sha, data, rels in retry:
            for rel in write_all(sha, data, rels):
                unhydrated.add(rel)
                inc = incoming[rel]
                s.conflict({"path": rel, "class": self.rules.classify(rel).value, "seq": inc.seq, "peer": inc.peer,
                            "theirs": "put", "savedAs": None,
                            "reason": "a local directory or file is in the way; theirs was not written"})
        batch.sync(self._pool.map)
        resolver = Resolver(self.tree, self.state, self.journal, self.peer, self.rules,
                            lambda sha: fetch_blob(s, self.layout, sha))
        for rel, base, local, inc in conflicted:
            report = resolver.resolve(rel, base, local, inc)
            if report is not None:
                s.conflict(report)
            if rel in resolver.blocked:
                unhydrated.add(rel)
            elif inc.change.op == "put":
                s.add(filesPulled=1)
            else:
                s.add(filesDeleted=1)

        with self.state.transaction():
            self.state.set_bases((rel, ch.sha256, ch.size, rel not in unhydrated)
                                 for rel, ch in new_base.items() if ch.op == "put")
            self.state.drop_bases(rel for rel, ch in new_base.items() if ch.op == "delete")
            self.tree.flush_stats()
            self.state.set_head(last)
            self.state.clear_pending(last)
            self.state.clear_intents()

    # ----------------------------------------------------------------- push
    def _candidates(self, paths: Iterable[str], full: bool) -> set[str]:
        """The paths to look at: those journaled, what is under them (locally
        or committed), and their committed parents (a file that a directory
        replaced)."""
        if full:
            return set(self.tree.walk()) | self.state.all_bases().keys()
        out: set[str] = set()
        for p in paths:
            out.add(p)
            out.update(self.tree.files_under(p))
            out.update(self.state.base_paths_under(p))
        out.update(self.state.bases({a for p in out for a in _parents(p)}))
        return out

    def _off_tree(self, s: Session, changes: list[Change], refused: dict[str, str]) -> list[Change]:
        """``changes`` without the puts that would leave the committed tree
        holding a file and a directory at one path: under a committed file,
        or over committed files, that this commit does not delete (what a
        pull could not write, because ours was in the way). Each is reported
        once as a conflict and recorded in ``refused``; it stays local."""
        gone = {c.path for c in changes if c.op == "delete"}
        puts = [c.path for c in changes if c.op == "put"]
        committed = self.state.bases({a for p in puts for a in _parents(p)} | set(puts))
        out = []
        for ch in changes:
            if ch.op == "put":
                hit = next((a for a in _parents(ch.path) if a in committed and a not in gone), None)
                if hit is None and ch.path not in committed:
                    hit = next((q for q in self.state.base_paths_under(ch.path) if q not in gone), None)
                if hit is not None:
                    if ch.path not in refused:
                        refused[ch.path] = hit
                        s.conflict({"path": ch.path, "class": self.rules.classify(ch.path).value, "ours": "put",
                                    "savedAs": None, "reason": f"the datastore holds {hit!r} "
                                    f"{'as a file' if ch.path.startswith(hit + '/') else 'under it'}; "
                                    "yours was not published (move it, or delete that path first)"})
                    continue
            out.append(ch)
        return out

    def _diff(self, cands: Iterable[str]) -> list[Change]:
        """Local changes against the bases: a pure function of disk and base.
        A file whose size differs from its base has changed whatever its
        hash: its sha256 is left to the upload, which reads it anyway."""
        changes = []
        intents = self.state.intents()
        cands = sorted(cands)
        bases = self.state.bases(cands)
        for rel in cands:
            try:
                check_rel_path(rel)
            except ValidationError:
                log.warning("not syncing %r: not a valid datastore path", rel)
                continue
            if not is_synced(rel):
                continue
            base = bases.get(rel)
            st = self.tree.stat(rel)
            if rel in intents and _sha(self.tree.current(rel, st)) in intents[rel]:
                continue  # left by an interrupted pull: the next pull settles it
            if st is None:
                if base is not None and base.hydrated:
                    changes.append(Change(rel, "delete"))
            elif base is None or st.st_size != base.size:
                changes.append(Change(rel, "put", None, st.st_size))
            else:
                cur = self.tree.current(rel, st)
                if isinstance(cur, FileState) and cur.sha256 != base.sha256:
                    changes.append(Change(rel, "put", cur.sha256, cur.size))
        self.tree.flush_stats()
        return changes

    def _upload(self, s: Session, changes: list[Change], uploaded: set[str]) -> list[Change]:
        """Upload the blobs of ``changes`` (concurrently, create-only, each
        content once). Returns the changes as uploaded, with their sha256: a
        file rewritten since the diff is committed with the bytes sent.

        Blobs found already stored (412) are then protected from a concurrent
        gc, right before the commit that relies on them (gc.protect); one a gc
        swept since the 412 is uploaded again."""
        found: set[str] = set()
        out = self._send(s, changes, uploaded, found)
        for _ in range(3):
            missing = protect(s, self.layout, found, self._pool)
            if not missing:
                return out
            uploaded -= missing
            found = set()
            again = {ch.path: ch for ch in self._send(
                s, [c for c in out if c.op == "put" and c.sha256 in missing], uploaded, found)}
            out = [again.get(c.path) if c.op == "put" and c.sha256 in missing else c for c in out]
            out = [c for c in out if c is not None]
        raise SwampError("blobs this push relies on keep being swept by a concurrent gc",
                         hint="let the gc finish, then push again", code="push_contended")

    def _send(self, s: Session, changes: list[Change], uploaded: set[str], found: set[str]) -> list[Change]:
        """The uploads of ``_upload``; ``found`` gets the blobs that were
        already stored.

        Small files are read and hashed here, ahead of the uploads (up to
        READ_AHEAD_BYTES), so the pool threads only send; a large file is
        read, hashed and sent by one pool thread (hashing releases the GIL)."""
        claim = threading.Lock()
        puts = [ch for ch in changes if ch.op == "put"]
        progress = Progress(self.on_progress, "upload", len(puts), sum(ch.size for ch in puts))
        ahead = _Budget(READ_AHEAD_BYTES)

        def read(ch: Change) -> tuple[bytes, str, bool] | None:
            try:
                data, sha = self.tree.read(ch.path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None  # gone since the diff; its delete is journaled for the next push
            # A base with this content means it is committed, so its blob is
            # kept remote; checked again on every attempt, after each rebase.
            with claim:
                fresh = sha not in uploaded and not self.state.has_blob(sha)
                if fresh:
                    uploaded.add(sha)
            return data, sha, fresh

        def send(ch: Change, got: tuple[bytes, str, bool] | None) -> Change | None:
            try:
                if got is None:
                    return None
                data, sha, fresh = got
                if fresh and not upload_blob(s, self.layout, sha, data):
                    with claim:
                        found.add(sha)
                return ch if sha == ch.sha256 else Change(ch.path, "put", sha, len(data))
            finally:
                progress.advance(1, ch.size)

        def read_and_send(ch: Change) -> Change | None:
            return send(ch, read(ch))

        def send_read(ch: Change, got: tuple[bytes, str, bool]) -> Change | None:
            try:
                return send(ch, got)
            finally:
                ahead.release(len(got[0]))

        results: list[Change | Future[Change | None] | None] = []
        try:
            for ch in changes:
                if ch.op == "delete":
                    results.append(ch)
                elif ch.size > SMALL_FILE:
                    results.append(self._pool.submit(read_and_send, ch))
                else:
                    ahead.wait_for(ch.size)
                    got = read(ch)
                    if got is None or not got[2]:
                        results.append(send(ch, got))
                    else:
                        ahead.take(len(got[0]))
                        results.append(self._pool.submit(send_read, ch, got))
            out = [r.result() if isinstance(r, Future) else r for r in results]
        except BaseException:
            for r in results:
                if isinstance(r, Future):
                    r.cancel()
            raise
        self.tree.flush_stats()
        return [c for c in out if c is not None]

    def _push_into(self, s: Session, command: str, full_walk: bool) -> None:
        taken = self.journal.take()
        full = full_walk or taken.bulk or not self.state.tracking
        cands = self._candidates(taken.paths, full)
        seen = {} if full else {rel: _stat_key(self.tree.abspath(rel)) for rel in cands}
        refused: dict[str, str] = {}
        changes = self._off_tree(s, self._diff(cands), refused)
        if changes:
            if self.state.head == 0:
                self._ensure_format(s, create=True)
            uploaded: set[str] = set()
            changes = self._upload(s, changes, uploaded)
            attempt = 0
            while changes:
                if not self._head_is_current():
                    # gc trims the log up to a checkpoint, and creating a
                    # trimmed seq succeeds: a commit there would be seen by
                    # no one. Pull first (one LIST when nothing is new).
                    self._pull_into(s)
                    changes = self._upload(s, self._off_tree(s, self._diff(cands), refused), uploaded)
                    continue
                if self._check_leases(s):
                    # Another thread's lease was lost: what it wrote is back
                    # to its base now, so look again.
                    changes = self._upload(s, self._off_tree(s, self._diff(cands), refused), uploaded)
                    continue
                head = self.state.head
                commit = Commit(head + 1, head, uuid.uuid4().hex, commitlog.writer_info(self.peer),
                                clock.isoformat(), command, changes)
                self.state.add_pending(commit.id, commit.seq)
                try:
                    s.put(self.layout.log(commit.seq), commit.encode(), if_none_match=True)
                except PreconditionFailed:
                    # Lost the race for this seq: take the peers' commits,
                    # resolve, and try again at the new head.
                    attempt += 1
                    if attempt >= MAX_COMMIT_ATTEMPTS:
                        raise SwampError(f"push gave up after losing {attempt} commit races in a row",
                                         hint="the datastore is very busy; try again", code="push_contended")
                    time.sleep(random.uniform(0, min(1.0, 0.01 * 2 ** attempt)))
                    self._pull_into(s)
                    changes = self._upload(s, self._off_tree(s, self._diff(cands), refused), uploaded)
                    continue
                self._record(s, commit)
                break
        if full:
            self.state.set_meta("tracking", "1")
        self.journal.done(taken)
        for rel in refused:
            self.journal.append(rel)  # still unpublished: looked at again by the next push
        # A write that marked its path before we took the journal but landed
        # after we looked at the file must not be forgotten.
        for rel, key in seen.items():
            if _stat_key(self.tree.abspath(rel)) != key:
                self.journal.append(rel)

    def _head_is_current(self) -> bool:
        """Whether this engine saw, recently, that the log continues from
        ``head``: a pull listed it (gc always keeps the commit at the newest
        checkpoint, so a listing after a trimmed head is never empty), or
        this engine created the commit at ``head``. Then ``head+1`` is the
        tip or a seq a peer holds (412), never a trimmed one."""
        current = self._current
        return (current is not None and current[0] == self.state.head
                and time.monotonic() - current[1] < HEAD_CURRENT_S)

    # --------------------------------------------------------------- leases
    def _check_leases(self, s: Session) -> bool:
        """Before a commit: every lease held in this process must still be
        ours (renewed now if its last heartbeat is old). What was written
        under a lost one is quarantined; LeaseLostError if this thread holds
        it, else True (the caller looks at its changes again)."""
        with self._leases_mutex:
            leases = list(self._leases)
        lost = []
        for held in leases:
            try:
                held.ensure_held(s)
            except LeaseLostError:
                lost.append(held)
        took_back = [self._quarantine(s, held) for held in lost]
        mine = [held for held in lost if held in self._held_here()]
        if mine:
            with self._leases_mutex:
                raise _lost(mine[0], self._leases[mine[0]])
        return any(took_back)

    def _quarantine(self, s: Session, held: Lease) -> bool:
        """Take back what was written under the lost lease ``held``: each of
        its paths that differs from its base is moved (bytes intact) to
        ``.sync/lost-lease/<time>-<lease>/<path>``, local only, and the path
        is restored to its base: removed if it had none, fetched again if it
        had one (left "not fetched" if the store cannot be reached: a read
        or a pull fetches it later). Each path then equals its base, so no
        push publishes it, whatever the journal still lists. Idempotent;
        called under the cache's lock. True if it took anything back."""
        with self._leases_mutex:
            scope = self._leases.get(held)
            written = set(scope.written) if scope is not None else set()
        if not written:
            return False
        changes = self._diff(self._candidates(written - {""}, "" in written))
        if not changes:
            return False
        if scope.aside is None:
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", held.name)[:80]
            stamp = clock.isoformat().replace(":", "").replace("+0000", "Z")
            scope.aside = f".sync/lost-lease/{stamp}-{slug}-{uuid.uuid4().hex[:6]}"
        bases = self.state.bases(ch.path for ch in changes)
        for ch in changes:
            if ch.op == "put":
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    self.tree.move_out(ch.path, f"{scope.aside}/{ch.path}")
        unfetched = []
        for ch in changes:
            base = bases.get(ch.path)
            if base is None:
                continue
            if self.hydration == "lazy" and self.rules.is_lazy(ch.path):
                unfetched.append(ch.path)
                continue
            try:
                data = fetch_blob(s, self.layout, base.sha256)
                st = self.tree.write(ch.path, data)
            except (ObjectStoreError, CorruptRemoteError, BlockedPath) as e:
                log.warning("could not restore %s after losing lease %r (%s); it is fetched on first read",
                            ch.path, held.name, e)
                unfetched.append(ch.path)
            else:
                self.tree.remember(ch.path, st, base.sha256)
        with self.state.transaction():
            self.state.set_bases((rel, bases[rel].sha256, bases[rel].size, False) for rel in unfetched)
            self.tree.flush_stats()
        log.warning("lease %r was lost: %d change(s) made under it were not published; kept in %s",
                    held.name, len(changes), scope.aside)
        return True

    def _record(self, s: Session, commit: Commit) -> None:
        with self.state.transaction():
            self.state.set_bases((ch.path, ch.sha256, ch.size, True) for ch in commit.changes if ch.op == "put")
            self.state.drop_bases(ch.path for ch in commit.changes if ch.op == "delete")
            self.state.set_head(commit.seq)
            self.state.clear_pending(commit.seq)
        self._current = (commit.seq, time.monotonic())
        s.add(filesPushed=sum(c.op == "put" for c in commit.changes),
              filesDeleted=sum(c.op == "delete" for c in commit.changes))
        if commit.seq % self.checkpoint_every == 0:
            tree = {p: (b.sha256, b.size) for p, b in self.state.all_bases().items()}
            try:
                checkpoint.write(s, self.layout, commit.seq, tree)
            except ObjectStoreError as e:
                # Only costs newcomers a longer replay; the next mark retries.
                log.warning("could not write checkpoint %d: %s", commit.seq, e)


@dataclass
class _LeaseScope:
    """What a thread wrote while holding a lease, and where it went if lost."""

    written: set[str] = field(default_factory=set)
    aside: str | None = None


def _lost(held: Lease, scope: _LeaseScope) -> LeaseLostError:
    kept = (f"what was written under it is kept in {scope.aside} (local only); " if scope.aside else "")
    return LeaseLostError(f"lease {held.name!r} was lost; nothing written under it was published",
                          hint=kept + "another peer took it over after our heartbeat stalled; retry")


class _Budget:
    """Bytes held by work in flight: ``wait_for(n)`` blocks until ``n`` more
    fit (or nothing is held), ``take``/``release`` account for them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._cond = threading.Condition()

    def wait_for(self, n: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self.held == 0 or self.held + n <= self.limit)

    def take(self, n: int) -> None:
        with self._cond:
            self.held += n

    def release(self, n: int) -> None:
        with self._cond:
            self.held -= n
            self._cond.notify()


def _default_peer() -> str:
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", hostname())[:40] or "peer"
    return f"{host}-{uuid.uuid4().hex[:8]}"


def _parents(rel: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b"]``."""
    segs = rel.split("/")
    return ["/".join(segs[:i]) for i in range(1, len(segs))]


def _own_base(change: Change) -> Base | None:
    return None if change.op == "delete" else Base(change.sha256, change.size)


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _format_body() -> bytes:
    return json.dumps({"format": "swamp-sync", "version": FORMAT_VERSION, "createdAt": clock.isoformat()}).encode()
