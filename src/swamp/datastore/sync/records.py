"""The records this engine appends to the log, and what each changes
locally once its create succeeded: ``record`` moves the bases, head, tip
and fences in one transaction (after a push's commit or any other record),
and ``append_record`` races for the tip with a record without changes (an
epoch record that fences a lease holding, an upgrade record), like any
commit (SYNC.md "Push" and "Leases")."""

from __future__ import annotations

import time

from swamp.datastore.objectstore.base import PreconditionFailed
from swamp.errors import SwampError
from swamp.util import clock
from swamp.util.jitter import uniform
from swamp.util.ids import uuid4_hex

from . import commitlog, identity
from .checkpoint_writer import CheckpointWriter
from .commitlog import Commit
from .counting import Session
from .engine_state import EngineState
from .fencing import Fencing
from .pull import Puller
from .remote_format import RemoteFormat

MAX_COMMIT_ATTEMPTS = 25


def jitter(most: float) -> float:
    """A random wait in [0, most] after a lost commit race."""
    return uniform(0, most)


class Contended(Exception):
    """A record lost MAX_COMMIT_ATTEMPTS races in a row."""


class Records:
    def __init__(self, ctx: EngineState, puller: Puller, fencing: Fencing, formats: RemoteFormat,
                 checkpoints: CheckpointWriter) -> None:
        self.ctx, self.puller, self.fencing = ctx, puller, fencing
        self.formats, self.checkpoints = formats, checkpoints

    def record(self, s: Session, commit: Commit, etag: str | None = None, made_at: float | None = None) -> None:
        """``commit`` was created (its ETag ``etag``). ``made_at``: when the
        create was sent (monotonic): from then on the log is known to
        continue from the commit's seq."""
        state = self.ctx.state
        with state.transaction():
            state.set_bases((ch.path, ch.sha256, ch.size, True, "" if ch.inline is None else f"log:{commit.seq}")
                            for ch in commit.changes if ch.op == "put")
            state.drop_bases(ch.path for ch in commit.changes if ch.op == "delete")
            state.set_head(commit.seq)
            state.set_tip(commit.seq, commit.id, etag)
            state.saw(commit.seq)
            if commit.fence is not None:
                fenced = state.fenced()
                commitlog.add_fence(commit, fenced)
                state.set_fenced(fenced)
            if commit.upgrade is not None:
                self.formats.saw_upgrade(commit.upgrade)
            state.clear_pending(commit.seq)
        self.ctx.head_seen.saw(commit.seq, time.monotonic() if made_at is None else made_at)
        self.fencing.published_under(commit)
        s.add(filesPushed=sum(c.op == "put" for c in commit.changes),
              filesDeleted=sum(c.op == "delete" for c in commit.changes))
        self.checkpoints.after(s, commit)

    def append_fence(self, lease_name: str, from_nonce: str, nonce: str, *, forced: bool = False) -> int:
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
            return self.append_record(f"lease {'force release' if forced else 'takeover'} {lease_name}",
                                      fence=fence)
        except Contended:
            raise SwampError(f"could not record the takeover of lease {lease_name!r}: the datastore is very busy",
                             hint="try again", code="push_contended") from None

    def append_record(self, command: str, *, fence: dict | None = None, upgrade: int | None = None) -> int:
        """Append a record without changes (an epoch record, an upgrade
        record) at the tip, racing for the seq like any commit; returns its
        seq. Contended after MAX_COMMIT_ATTEMPTS lost races."""
        ctx = self.ctx
        state = ctx.state
        with ctx.exclusive():
            s = ctx.session()
            since = time.monotonic()
            for attempt in range(MAX_COMMIT_ATTEMPTS):
                while not ctx.head_seen.listed_since(state, since):
                    since = self.puller.pull_fresh(s, since)  # until a LIST shows nothing new
                head = state.head
                if head == 0:
                    self.formats.ensure(s, create=True)
                    identity.claim(state, s, ctx.layout)
                commit = Commit(head + 1, head, uuid4_hex(), commitlog.writer_info(ctx.peer),
                                clock.isoformat(), command, [], parent_id=state.tip()[0],
                                fence=fence, upgrade=upgrade)
                state.add_pending(commit.id, commit.seq)
                put_at = time.monotonic()
                try:
                    etag = s.put(ctx.layout.log(commit.seq), commit.encode(), if_none_match=True)
                except PreconditionFailed:
                    time.sleep(jitter(min(1.0, 0.01 * 2 ** attempt)))
                    since = self.puller.pull_fresh(s, since)
                    continue
                self.record(s, commit, etag, put_at)
                return commit.seq
        raise Contended()
