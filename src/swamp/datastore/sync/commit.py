"""Commit (SYNC.md "Push"): find local changes (journal, stat cache, hash
against the bases), upload their blobs, and create ``log/head+1``: the one
and only commit point, create-only. A lost race (412) pulls, looks at the
changes again and retries at the new head (rebase); the create follows a
LIST made in the same operation, after the uploads (a pull: one request
when nothing is new), so a commit never lands on a trimmed seq nor on a
remote emptied or replaced since the command began. Once the
create succeeds the bases and head move in one transaction, and the peer
whose commit lands on a multiple of K writes the checkpoint.

A mixin of ``SyncEngine``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterable

from swamp.errors import CorruptRemoteError, ObjectStoreError, PreconditionFailed, SwampError, ValidationError
from swamp.util import clock
from swamp.util.ids import uuid4_hex
from swamp.util.names import check_rel_path

from . import checkpoint, commitlog, identity, scopes
from .commitlog import HEAD_CURRENT_S, Change, Commit
from .compare import content_id as _sha
from .compare import parents as _parents
from .blobs import upload_blob
from .counting import Session
from .localonly import is_synced
from .localtree import FileState

def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


def _jitter(most: float) -> float:
    """A random wait in [0, most] after a lost commit race."""
    import random  # here: only a lost race waits (random costs a command ~1 ms)

    return random.uniform(0, most)


#: inline contents one checkpoint carries, at most (a newcomer reads it in
#: one GET, and holds it in memory); past it, the writer stores blobs
CHECKPOINT_INLINE_TOTAL = 32 << 20

MAX_COMMIT_ATTEMPTS = 25


class Committer:
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
        once as a conflict and recorded in ``refused``; it stays local.
        A new version no live holding of its lease covers is not published
        either (publishing.py): it stays local, journaled, unreported."""
        changes = self._publishable(changes, refused)
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
                _log().warning("not syncing %r: not a valid datastore path", rel)
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

    def _push_into(self, s: Session, command: str, full_walk: bool, since: float | None = None) -> None:
        """``since``: when the engine operation began (``sync`` pulls
        first): a listing made before it is not trusted for the create."""
        since = time.monotonic() if since is None else since
        self.renumbered.clear()  # journaled: taken below
        taken = self.journal.take()
        full = full_walk or taken.bulk or not self.state.tracking
        cands = self._candidates(taken.paths, full)
        seen = {} if full else {rel: _stat_key(self.tree.abspath(rel)) for rel in cands}
        refused: dict[str, str] = {}
        changes = self._off_tree(s, self._diff(cands), refused)
        if changes:
            if self.state.head == 0:
                self._ensure_format(s, create=True)
                identity.claim(self.state, s, self.layout)
            uploaded: set[str] = set()
            sent = False  # whether ``changes`` are as uploaded
            if self._head_is_current():
                # (else the loop pulls before anything is sent: the pull may
                # refuse this remote as another one, identity.py)
                changes, since = self._upload_timed(s, changes, uploaded, since)
                sent = True
            attempt = 0
            while changes:
                if not self._listed_since(since):
                    # The create must extend the log this cache stands on,
                    # as a LIST made in this operation, after the last
                    # upload, shows it (one LIST when nothing is new): gc
                    # trims the log up to a checkpoint, and creating a
                    # trimmed seq succeeds, where no one would see it; and
                    # a remote emptied (or replaced) since an earlier
                    # listing would take log/<head+1> after a gap. That
                    # pull refuses such a remote (identity.py).
                    head = self.state.head
                    since = self._pull_fresh(s, since)
                    if sent and self.state.head == head:
                        continue  # nothing new: the changes stand as sent
                    cands |= self._candidates(self.renumbered, False)  # our versions it renumbered
                    changes, since = self._upload_timed(s, self._off_tree(s, self._diff(cands), refused),
                                                        uploaded, since)
                    sent = True
                    continue
                self._fenced_leases()
                if self._check_leases(s):
                    # Another thread's lease was lost: what it wrote is back
                    # to its base now, so look again.
                    changes, since = self._upload_timed(s, self._off_tree(s, self._diff(cands), refused),
                                                        uploaded, since)
                    continue
                head = self.state.head
                # It names the commit it extends: a puller refuses it on any
                # other chain (commitlog.check_chain).
                commit = Commit(head + 1, head, uuid4_hex(), commitlog.writer_info(self.peer),
                                clock.isoformat(), command, changes, parent_id=self.state.tip()[0],
                                leases=self._leases_of(changes))
                self.state.add_pending(commit.id, commit.seq)
                # what this cache publishes as its own work (origin.py: a re-attach republishes only that)
                self.state.add_own((c.path, c.sha256) for c in changes if c.op == "put")
                # Inline contents are sent with the record, once per attempt.
                s.add(bytesPushed=commit.inline_bytes())
                put_at = time.monotonic()
                try:
                    etag = s.put(self.layout.log(commit.seq), commit.encode(), if_none_match=True)
                except PreconditionFailed:
                    # Lost the race for this seq: take the peers' commits,
                    # resolve, and try again at the new head.
                    attempt += 1
                    if attempt >= MAX_COMMIT_ATTEMPTS:
                        raise SwampError(f"push gave up after losing {attempt} commit races in a row",
                                         hint="the datastore is very busy; try again", code="push_contended")
                    time.sleep(_jitter(min(1.0, 0.01 * 2 ** attempt)))
                    since = self._pull_fresh(s, since)
                    cands |= self._candidates(self.renumbered, False)  # our versions it renumbered
                    changes, since = self._upload_timed(s, self._off_tree(s, self._diff(cands), refused),
                                                        uploaded, since)
                    continue
                self._record(s, commit, etag, put_at)
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

    def _pull_fresh(self, s: Session, since: float) -> float:
        """Pull, and return the ``since`` the create must then wait for: a
        pull that brought commits downloaded their contents after its LIST
        (seconds, a large blob minutes), so its listing is as old as that
        download and the create waits for a fresh LIST (one request when
        nothing is new); a pull that brought nothing made its LIST just now."""
        head = self.state.head
        self._pull_into(s)
        return since if self.state.head == head else time.monotonic()

    def _upload_timed(self, s: Session, changes: list[Change], uploaded: set[str],
                      since: float) -> tuple[list[Change], float]:
        """``_upload``; if it sent anything (requests take time, a large
        blob minutes), the create waits for a listing made after it."""
        before = s.counts.requests
        out = self._upload(s, changes, uploaded)
        return out, (time.monotonic() if s.counts.requests != before else since)

    def _listed_since(self, since: float) -> bool:
        """Whether a listing made at or after ``since`` saw the log continue
        from ``head`` (or this engine created the commit at ``head`` since
        then), so that ``head + 1`` is the tip or a seq a peer holds: a 412,
        never a trimmed seq nor a seq past the end of another chain. What
        a LIST shows of the remote's identity (identity.check_listing) is
        then at most one operation old, never a session's length."""
        current = self._current
        return (current is not None and current[0] == self.state.head and current[1] >= since
                and self._head_is_current())

    def _head_is_current(self) -> bool:
        """Whether this engine saw, recently, that the log continues from
        ``head``: a pull listed it (gc always keeps the commit at the newest
        checkpoint, so a listing after a trimmed head is never empty), or
        this engine created the commit at ``head``. Then ``head+1`` is the
        tip or a seq a peer holds (412), never a trimmed one."""
        current = self._current
        return (current is not None and current[0] == self.state.head
                and time.monotonic() - current[1] < HEAD_CURRENT_S
                and (self.state.head == 0 or self.state.tip()[0] is not None))

    def _record(self, s: Session, commit: Commit, etag: str | None = None, made_at: float | None = None) -> None:
        """``made_at``: when the create was sent (monotonic): from then on
        the log is known to continue from the commit's seq."""
        with self.state.transaction():
            self.state.set_bases((ch.path, ch.sha256, ch.size, True, "" if ch.inline is None else f"log:{commit.seq}")
                                 for ch in commit.changes if ch.op == "put")
            self.state.drop_bases(ch.path for ch in commit.changes if ch.op == "delete")
            self.state.set_head(commit.seq)
            self.state.set_tip(commit.seq, commit.id, etag)
            self.state.saw(commit.seq)
            if commit.fence is not None:
                fenced = self.state.fenced()
                commitlog.add_fence(commit, fenced)
                self.state.set_fenced(fenced)
            if commit.upgrade is not None:
                self._saw_upgrade(commit.upgrade)
            self.state.clear_pending(commit.seq)
        self._current = (commit.seq, time.monotonic() if made_at is None else made_at)
        self._published_under(commit)
        s.add(filesPushed=sum(c.op == "put" for c in commit.changes),
              filesDeleted=sum(c.op == "delete" for c in commit.changes))
        if commit.seq % self.checkpoint_every == 0:
            try:
                tree, stored = self._checkpoint_tree(s, commit)
                checkpoint.write(s, self.layout, commit.seq, tree, commit.id, self.state.fenced())
                self.state.mark_blobs_stored(stored)
            except (ObjectStoreError, CorruptRemoteError, SwampError) as e:
                # Only costs newcomers a longer replay; the next mark retries.
                _log().warning("could not write checkpoint %d: %s", commit.seq, e)

    # ------------------------------------------------ fencing at the commit point
    def _leases_of(self, changes: list[Change]) -> dict[str, str]:
        """The lease holdings (name -> nonce) under which any of ``changes``
        was written: the commit names them, so that every peer ignores it
        if the log fenced one of them before it (commitlog.fenced_out)."""
        paths = {c.path for c in changes}
        wanted = paths | {a for p in paths for a in _parents(p)} | {""}
        with self._leases_mutex:
            out = {held.name: held.nonce for held, scope in self._leases.items() if scope.written & wanted}
        # and what another process on this cache wrote under its own (its
        # scope file, scopes.py): a fenced one was taken back before this
        for h in self._other_holdings():
            if h.written & wanted:
                out.setdefault(h.name, h.nonce)
        # and the lease this thread holds for a new version it publishes (publishing.py)
        for held in self._held_here():
            if not held.lost and held.name not in out and any(self._version_lease(p) == held.name for p in paths):
                out[held.name] = held.nonce
        return out

    def _fenced_leases(self) -> None:
        """A lease holding of this process that the log (as pulled) fenced
        was taken over: it is lost, whatever its heartbeat says, and the
        lease check that follows takes back what was written under it."""
        fenced = self.state.fenced()
        with self._leases_mutex:
            held = list(self._leases)
        for lease in held:
            if lease.nonce in fenced.get(lease.name, {}):
                lease.lost = True

    def _published_under(self, commit: Commit) -> None:
        with self._leases_mutex:
            for held, scope in self._leases.items():
                if commit.leases.get(held.name) == held.nonce:
                    scope.published.append(commit.seq)
        # in the scope files too, for a holder in another process (scopes.py)
        for nonce in commit.leases.values():
            scopes.published(self.root / ".sync", nonce, commit.seq)

    def _append_fence(self, lease_name: str, from_nonce: str, nonce: str, *, forced: bool = False) -> int:
        """After taking lease ``lease_name`` over from the holding
        ``from_nonce``: append the epoch record that fences it, before any
        work under the new holding. Every commit of the old holder then
        either lands before it (and the new holder pulls it) or is refused:
        the old holder's create of that seq fails, its pull shows the fence,
        and it counts its lease as lost. ``forced``: a ``lock release
        --force`` (no new holder). Returns the record's seq."""
        fence = {"lease": lease_name, "from": from_nonce, "holder": nonce}
        if forced:
            fence["forced"] = True  # `lock release --force`: no new holder, and the record says so
        try:
            return self._append_record(f"lease {'force release' if forced else 'takeover'} {lease_name}",
                                       fence=fence)
        except _Contended:
            raise SwampError(f"could not record the takeover of lease {lease_name!r}: the datastore is very busy",
                             hint="try again", code="push_contended") from None

    def _append_record(self, command: str, *, fence: dict | None = None, upgrade: int | None = None) -> int:
        """Append a record without changes (an epoch record, an upgrade
        record) at the tip, racing for the seq like any commit; returns its
        seq. _Contended after MAX_COMMIT_ATTEMPTS lost races."""
        with self._exclusive():
            s = self._session()
            since = time.monotonic()
            for attempt in range(MAX_COMMIT_ATTEMPTS):
                while not self._listed_since(since):
                    since = self._pull_fresh(s, since)  # until a LIST shows nothing new
                head = self.state.head
                if head == 0:
                    self._ensure_format(s, create=True)
                    identity.claim(self.state, s, self.layout)
                commit = Commit(head + 1, head, uuid4_hex(), commitlog.writer_info(self.peer),
                                clock.isoformat(), command, [], parent_id=self.state.tip()[0],
                                fence=fence, upgrade=upgrade)
                self.state.add_pending(commit.id, commit.seq)
                put_at = time.monotonic()
                try:
                    etag = s.put(self.layout.log(commit.seq), commit.encode(), if_none_match=True)
                except PreconditionFailed:
                    time.sleep(_jitter(min(1.0, 0.01 * 2 ** attempt)))
                    since = self._pull_fresh(s, since)
                    continue
                self._record(s, commit, etag, put_at)
                return commit.seq
        raise _Contended()

    def _checkpoint_tree(self, s: Session, commit: Commit) -> tuple[checkpoint.Tree, list[tuple[str, str]]]:
        """The tree at ``commit``, with the contents committed inline carried
        inline (checkpoint.py): from this commit, else from the local file
        when it still holds them, else from the record that has them. Past
        CHECKPOINT_INLINE_TOTAL, the rest are stored as blobs first (and
        returned, (path, sha256), to be recorded as such once the
        checkpoint is written), so a checkpoint stays one bounded GET."""
        in_hand = {ch.path: ch.inline for ch in commit.changes if ch.inline is not None}
        tree: checkpoint.Tree = {}
        room = CHECKPOINT_INLINE_TOTAL
        spill: dict[str, bytes] = {}
        stored: list[tuple[str, str]] = []
        for path, b in sorted(self.state.all_bases().items()):
            data = None
            if b.src:
                data = in_hand.get(path)
                if data is None:
                    try:
                        data, sha = self.tree.read(path)
                    except OSError:
                        sha = None
                    if sha != b.sha256:
                        data = self._content(s, path, b)
                if len(data) > room:
                    spill[b.sha256] = data
                    stored.append((path, b.sha256))
                    data = None
                else:
                    room -= len(data)
            tree[path] = (b.sha256, b.size, data)
        if spill:
            self._store_blobs(s, spill)
        return tree, stored

    def _store_blobs(self, s: Session, contents: dict[str, bytes]) -> None:
        """Create these blobs (sha256 -> bytes); those found stored already
        are protected from a concurrent gc, and stored again if one swept
        them meanwhile."""
        from .gc import protect

        fresh = list(self._pool.map(lambda item: upload_blob(s, self.layout, *item), contents.items()))
        found = {sha for sha, new in zip(contents, fresh) if not new}
        for sha in protect(s, self.layout, found, self._pool):
            upload_blob(s, self.layout, sha, contents[sha])


class _Contended(Exception):
    """A record lost MAX_COMMIT_ATTEMPTS races in a row."""


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino
