"""Pull (SYNC.md "Pull"): list the log after ``head``, start from a
checkpoint when the log no longer reaches back to it, fetch the new
commits and gather each path's net change; applying them (where the local
file still equals its base; a path changed on both sides goes to the
conflict resolver) is applying.py. The head moves, with the bases it
implies, in one transaction once every file is durable.

A collaborator of ``SyncEngine``: it reads the engine state, and uses the
remote format (remote_format.py), the transfers and the fencing (which
follows what a pull renumbers) through their public methods."""

from __future__ import annotations

import time

from . import checkpoint, commitlog, identity
from .applying import Applying
from .commitlog import Change, Commit
from .conflicts import Incoming
from .counting import Session
from .engine_state import EngineState
from .fencing import Fencing
from .remote_format import RemoteFormat
from .transfers import Transfers


def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class _Start:
    """Where a pull applies from: ``seq`` (the head, or a checkpoint's),
    the checkpoint's tree if it starts from one, the id of the commit at
    ``seq``, the rejected paths and the fences known so far."""

    def __init__(self, seq: int, parent_id: str | None, fenced: dict) -> None:
        self.seq, self.parent_id, self.fenced = seq, parent_id, fenced
        self.tree: checkpoint.Tree | None = None
        self.rejected: list[str] = []


class _Gathered:
    """The net change per path of the commits a pull fetched."""

    def __init__(self) -> None:
        self.incoming: dict[str, Incoming] = {}
        self.own: dict[str, Change] = {}
        self.srcs: dict[str, str] = {}  # path -> the record carrying its content inline
        self.own_srcs: dict[str, str] = {}


class Puller:
    def __init__(self, ctx: EngineState, formats: RemoteFormat, transfers: Transfers, fencing: Fencing) -> None:
        self.ctx, self.formats, self.transfers, self.fencing = ctx, formats, transfers, fencing

    def pull_into(self, s: Session) -> None:
        state, layout = self.ctx.state, self.ctx.layout
        position = state.position()  # head, seen and tip in one query: most pulls need nothing more
        head, _seen, parent_id, known_etag = position
        # One LIST from the commit at head: it also says whether this is
        # still the remote (and the chain) this cache applied (identity.py).
        # What it shows is as of when it was asked, not when the apply
        # (downloads included) ends: the head-is-current rule counts from here.
        listed_at = time.monotonic()
        listed = commitlog.list_from(s, layout, head)
        identity.check_listing(state, f"{s.name}{layout.namespace}", head, listed, position)
        seqs = sorted(q for q in listed if q > head)
        if head and parent_id is None and head in listed:
            parent_id = commitlog.fetch_one(s, layout, head).id  # state from an older swamp: once
        if not seqs:
            if head and parent_id is not None and known_etag is None:
                state.set_tip(head, parent_id, listed.get(head))
            self.ctx.head_seen.saw(head, listed_at)
            return
        start = self._start(s, head, seqs, listed, parent_id)
        seqs = [q for q in seqs if q > start.seq]
        commitlog.check_contiguous(seqs, start.seq)
        commits = commitlog.fetch(s, layout, seqs, self.ctx.pool)
        # Nothing is applied from a commit that does not extend the chain
        # this cache stands on (a commit made on a trimmed seq, say).
        commitlog.check_chain(commits, start.parent_id, start.seq)
        tip = (commits[-1].id, listed.get(commits[-1].seq)) if commits else (start.parent_id, listed.get(start.seq))
        got = self._gather(start, commits)
        for path in start.rejected:
            s.conflict({"path": path, "reason": "invalid path in a remote record; not applied"})
        # Each fence carries its seq, so recording it before the head moves
        # is harmless: it applies to later commits only.
        state.set_fenced(start.fenced)
        Applying(self.ctx, self.transfers, self.fencing, s, got.incoming, got.own, got.srcs,
                 got.own_srcs).run(commits[-1].seq if commits else start.seq)
        # After the head moved: a kill in between leaves a tip whose seq is
        # not the head, which counts as unknown and is read again.
        state.set_tip(state.head, *tip)
        state.saw(max(listed))
        self.ctx.head_seen.saw(state.head, listed_at)

    def pull_fresh(self, s: Session, since: float) -> float:
        """Pull, and return the ``since`` the create must then wait for: a
        pull that brought commits downloaded their contents after its LIST
        (seconds, a large blob minutes), so its listing is as old as that
        download and the create waits for a fresh LIST (one request when
        nothing is new); a pull that brought nothing made its LIST just now."""
        head = self.ctx.state.head
        self.pull_into(s)
        return since if self.ctx.state.head == head else time.monotonic()

    def _start(self, s: Session, head: int, seqs: list[int], listed: dict, parent_id: str | None) -> _Start:
        state, layout = self.ctx.state, self.ctx.layout
        start = _Start(head, parent_id, state.fenced())
        if head == 0:
            self.formats.ensure(s, create=False)
        if head == 0 or seqs[0] != head + 1:
            # A new peer, or one the retention window left behind: start
            # from the newest checkpoint that the listed log continues,
            # once the remote is known to be this cache's.
            identity.check_identity(state, s, layout)
            usable = [c for c in checkpoint.seqs(s, layout) if head < c <= seqs[-1] and c >= seqs[0] - 1]
            if usable:
                start.seq = usable[-1]
                start.tree, start.rejected, start.parent_id, ck_fenced = checkpoint.fetch_full(s, layout, start.seq)
                for name, nonces in ck_fenced.items():
                    for nonce, seq in nonces.items():
                        start.fenced.setdefault(name, {}).setdefault(nonce, seq)
                if start.parent_id is None and start.seq in listed:
                    start.parent_id = commitlog.fetch_one(s, layout, start.seq).id  # a checkpoint from before ids
        return start

    def _gather(self, start: _Start, commits: list[Commit]) -> _Gathered:
        got = _Gathered()
        if start.tree is not None:
            bases = self.ctx.state.all_bases()
            for path, (sha, size, data) in start.tree.items():
                b = bases.get(path)
                if b is None or b.sha256 != sha:
                    got.incoming[path] = Incoming(Change(path, "put", sha, size, data), start.seq, "checkpoint",
                                                  start.parent_id or "")
                    got.srcs[path] = "" if data is None else f"checkpoint:{start.seq}"
            for path in bases.keys() - start.tree.keys():
                got.incoming[path] = Incoming(Change(path, "delete"), start.seq, "checkpoint", start.parent_id or "")
        pending = self.ctx.state.pending()
        for c in commits:
            start.rejected += c.rejected
            if commitlog.fenced_out(c, start.fenced):
                # Made under a lease holding fenced earlier in the log: every
                # peer ignores it alike (a holder that lost its lease).
                _log().warning("commit %d by %s was made under a lease taken over before it; ignored", c.seq, c.peer)
                continue
            commitlog.add_fence(c, start.fenced)
            if c.upgrade is not None:
                # The remote moved to a newer format here (upgrade_format):
                # from now on this peer may inline contents too. Before the
                # head moves is harmless: a commit of ours lands after this
                # record only once a pull applied it.
                self.formats.saw_upgrade(c.upgrade)
            mine = c.id in pending
            for ch in c.changes:
                # where the path's newest content is kept (own or theirs)
                got.srcs[ch.path] = "" if ch.inline is None else f"log:{c.seq}"
                if mine:
                    # Our own commit from a push killed after its commit
                    # point: it becomes the base, whatever the disk holds now.
                    got.own[ch.path] = ch
                    got.own_srcs[ch.path] = got.srcs[ch.path]
                    got.incoming.pop(ch.path, None)
                else:
                    got.incoming[ch.path] = Incoming(ch, c.seq, c.peer, c.id)
        return got
