"""Commit (SYNC.md "Push"): find local changes (journal, stat cache, hash
against the bases; changes.py), upload their blobs (transfers.py), and
create ``log/head+1``: the one and only commit point, create-only. A lost
race (412) pulls, looks at the changes again and retries at the new head
(rebase); the create follows a LIST made in the same operation, after the
uploads (a pull: one request when nothing is new), so a commit never lands
on a trimmed seq nor on a remote emptied or replaced since the command
began. Once the create succeeds the bases and head move in one
transaction, and the peer whose commit lands on a multiple of K writes the
checkpoint (records.py).

A collaborator of ``SyncEngine``, calling the puller, the transfers, the
fencing, the publishing rule and the records through their public methods."""

from __future__ import annotations

import os
import time
from pathlib import Path

from swamp.datastore.objectstore.base import PreconditionFailed
from swamp.errors import SwampError
from swamp.util import clock
from swamp.util.ids import uuid4_hex

from . import commitlog, identity
from .changes import LocalChanges
from .commitlog import Change, Commit
from .compare import parents as _parents
from .counting import Session
from .engine_state import EngineState
from .fencing import Fencing
from .publishing import Publishing
from .pull import Puller
from .records import MAX_COMMIT_ATTEMPTS, Records, jitter
from .remote_format import RemoteFormat
from .transfers import Transfers


class _Push:
    """One push's progress: what it looks at, what it sent, since when a
    listing counts (monotonic), how many races it lost."""

    def __init__(self, s: Session, command: str, cands: set[str], changes: list[Change], since: float) -> None:
        self.s, self.command, self.cands, self.changes, self.since = s, command, cands, changes, since
        self.refused: dict[str, str] = {}
        self.uploaded: set[str] = set()
        self.sent = False  # whether ``changes`` are as uploaded
        self.attempt = 0


class Committer:
    def __init__(self, ctx: EngineState, changes: LocalChanges, puller: Puller, transfers: Transfers,
                 fencing: Fencing, publishing: Publishing, records: Records, formats: RemoteFormat) -> None:
        self.ctx, self.changes, self.puller, self.transfers = ctx, changes, puller, transfers
        self.fencing, self.publishing, self.records, self.formats = fencing, publishing, records, formats

    def push_into(self, s: Session, command: str, full_walk: bool, since: float | None = None) -> None:
        """``since``: when the engine operation began (``sync`` pulls
        first): a listing made before it is not trusted for the create."""
        ctx = self.ctx
        since = time.monotonic() if since is None else since
        ctx.renumbered.clear()  # journaled: taken below
        taken = ctx.journal.take()
        full = full_walk or taken.bulk or not ctx.state.tracking
        cands = self.changes.candidates(taken.paths, full)
        seen = {} if full else {rel: _stat_key(ctx.tree.abspath(rel)) for rel in cands}
        push = _Push(s, command, cands, [], since)
        push.changes = self.off_tree(s, self.changes.diff(cands), push.refused)
        if push.changes:
            self._commit(push)
        if full:
            ctx.state.set_meta("tracking", "1")
        ctx.journal.done(taken)
        for rel in push.refused:
            ctx.journal.append(rel)  # still unpublished: looked at again by the next push
        # A write that marked its path before we took the journal but landed
        # after we looked at the file must not be forgotten.
        for rel, key in seen.items():
            if _stat_key(ctx.tree.abspath(rel)) != key:
                ctx.journal.append(rel)

    def _commit(self, push: _Push) -> None:
        state, head_seen = self.ctx.state, self.ctx.head_seen
        if state.head == 0:
            self.formats.ensure(push.s, create=True)
            identity.claim(state, push.s, self.ctx.layout)
        if head_seen.is_current(state):
            # (else the loop pulls before anything is sent: the pull may
            # refuse this remote as another one, identity.py)
            self._upload(push, push.changes)
            push.sent = True
        while push.changes:
            if not head_seen.listed_since(state, push.since):
                self._pull_before_create(push)
                continue
            self.fencing.fenced_leases()
            if self.fencing.check_leases(push.s):
                # Another thread's lease was lost: what it wrote is back
                # to its base now, so look again.
                self._look_again(push)
                continue
            if self._create(push):
                break

    def _pull_before_create(self, push: _Push) -> None:
        """The create must extend the log this cache stands on, as a LIST
        made in this operation, after the last upload, shows it (one LIST
        when nothing is new): gc trims the log up to a checkpoint, and
        creating a trimmed seq succeeds, where no one would see it; and a
        remote emptied (or replaced) since an earlier listing would take
        log/<head+1> after a gap. That pull refuses such a remote
        (identity.py)."""
        head = self.ctx.state.head
        push.since = self.puller.pull_fresh(push.s, push.since)
        if push.sent and self.ctx.state.head == head:
            return  # nothing new: the changes stand as sent
        push.cands |= self.changes.candidates(self.ctx.renumbered, False)  # our versions it renumbered
        self._look_again(push)
        push.sent = True

    def _create(self, push: _Push) -> bool:
        """Create ``log/head+1``; True once it landed, False after a lost
        race (then rebased: pulled, and the changes looked at again)."""
        ctx, s = self.ctx, push.s
        head = ctx.state.head
        # It names the commit it extends: a puller refuses it on any
        # other chain (commitlog.check_chain).
        commit = Commit(head + 1, head, uuid4_hex(), commitlog.writer_info(ctx.peer),
                        clock.isoformat(), push.command, push.changes, parent_id=ctx.state.tip()[0],
                        leases=self.fencing.leases_of(push.changes))
        ctx.state.add_pending(commit.id, commit.seq)
        # what this cache publishes as its own work (origin.py: a re-attach republishes only that)
        ctx.state.add_own((c.path, c.sha256) for c in push.changes if c.op == "put")
        # Inline contents are sent with the record, once per attempt.
        s.add(bytesPushed=commit.inline_bytes())
        put_at = time.monotonic()
        try:
            etag = s.put(ctx.layout.log(commit.seq), commit.encode(), if_none_match=True)
        except PreconditionFailed:
            # Lost the race for this seq: take the peers' commits,
            # resolve, and try again at the new head.
            push.attempt += 1
            if push.attempt >= MAX_COMMIT_ATTEMPTS:
                raise SwampError(f"push gave up after losing {push.attempt} commit races in a row",
                                 hint="the datastore is very busy; try again", code="push_contended")
            time.sleep(jitter(min(1.0, 0.01 * 2 ** push.attempt)))
            push.since = self.puller.pull_fresh(s, push.since)
            push.cands |= self.changes.candidates(ctx.renumbered, False)  # our versions it renumbered
            self._look_again(push)
            return False
        self.records.record(s, commit, etag, put_at)
        return True

    def _look_again(self, push: _Push) -> None:
        """Diff again, and upload what changed."""
        self._upload(push, self.off_tree(push.s, self.changes.diff(push.cands), push.refused))

    def _upload(self, push: _Push, changes: list[Change]) -> None:
        """``Transfers.upload``; if it sent anything (requests take time, a
        large blob minutes), the create waits for a listing made after it."""
        s = push.s
        before = s.counts.requests
        push.changes = self.transfers.upload(s, changes, push.uploaded, self.formats.inline_limit(s))
        if s.counts.requests != before:
            push.since = time.monotonic()

    def off_tree(self, s: Session, changes: list[Change], refused: dict[str, str]) -> list[Change]:
        """``changes`` without the puts that would leave the committed tree
        holding a file and a directory at one path: under a committed file,
        or over committed files, that this commit does not delete (what a
        pull could not write, because ours was in the way). Each is reported
        once as a conflict and recorded in ``refused``; it stays local.
        A new version no live holding of its lease covers is not published
        either (publishing.py): it stays local, journaled, unreported."""
        state = self.ctx.state
        changes = self.publishing.publishable(changes, refused)
        gone = {c.path for c in changes if c.op == "delete"}
        puts = [c.path for c in changes if c.op == "put"]
        committed = state.bases({a for p in puts for a in _parents(p)} | set(puts))
        out = []
        for ch in changes:
            if ch.op == "put":
                hit = next((a for a in _parents(ch.path) if a in committed and a not in gone), None)
                if hit is None and ch.path not in committed:
                    hit = next((q for q in state.base_paths_under(ch.path) if q not in gone), None)
                if hit is not None:
                    if ch.path not in refused:
                        refused[ch.path] = hit
                        s.conflict({"path": ch.path, "class": self.ctx.rules.classify(ch.path).value,
                                    "ours": "put", "savedAs": None, "reason": f"the datastore holds {hit!r} "
                                    f"{'as a file' if ch.path.startswith(hit + '/') else 'under it'}; "
                                    "yours was not published (move it, or delete that path first)"})
                    continue
            out.append(ch)
        return out


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino
