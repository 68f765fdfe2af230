"""A new version is published only under its lease (SYNC.md "The renumber
rule"): a version number, once a command reported it, is final.

Versions are allocated under their owner's lease (a model's versions under
``model/<type>/<id>``), and the holder pulled after taking it. If a push
that holds no such lease could publish a version (``datastore sync`` of a
run whose own push failed, renumbered or not), it could take the very
number the current holder just allocated and is about to report. So every
commit that adds a version directory's file without a base names a live
holding of that version's lease:

- the holding the path was written under (this thread's, another thread's
  or another process's on this cache: ``Fencing.leases_of``), or a holding of
  that lease this thread has now;
- otherwise the push takes the lease itself, before the cache's lock and
  before its pull, so that pull (which renumbers ours above a peer's) and
  the commit both happen under it: ``datastore sync`` (and setup) waits for
  it as a run would; a command's own push (publishing an older run's
  leftovers beside its work) tries it once and does not wait, so a command
  never waits on another peer's run, and two peers holding leases never
  wait on each other. A leftover whose lease is busy, and the records that
  name it, wait for the next push.

Whatever the push cannot publish under a lease stays local and journaled;
``Publishing.publishable`` is the last check, right before every diff
becomes a commit. A collaborator of ``SyncEngine``: it asks the fencing
(fencing.py) which holdings cover what, and the origin (origin.py) which
files are copies of other peers' work."""

from __future__ import annotations

import contextlib
from typing import Iterable, Iterator

from swamp.errors import LockTimeoutError

from .changes import LocalChanges
from .commitlog import Change
from .engine_state import EngineState
from .fencing import Fencing
from .lease_scope import version_lease, written_in
from .origin import Origin
from .renumber import _Files


class Publishing:
    def __init__(self, ctx: EngineState, fencing: Fencing, changes: LocalChanges, origin: Origin) -> None:
        self.ctx, self.fencing, self.changes, self.origin = ctx, fencing, changes, origin

    def _new_versions(self, changes: Iterable[Change]) -> dict[str, str]:
        """path -> lease, for the puts of ``changes`` that add a file to a
        version directory (no base: never published here)."""
        wanted = {}
        for ch in changes:
            if ch.op == "put":
                name = version_lease(self.ctx.rules, ch.path)
                if name is not None:
                    wanted[ch.path] = name
        if not wanted:
            return {}
        published = self.ctx.state.bases(wanted)
        return {rel: name for rel, name in wanted.items() if rel not in published}

    def _uncovered(self, news: dict[str, str], *, lost_too: bool = False) -> dict[str, str]:
        """Those of ``news`` that no live holding of their lease covers: one
        this thread has, or one the path was written under (this process's
        or, by its scope file, another's on this cache). ``lost_too``: a
        lost holding covers its paths as well (they are taken back, never
        published: no lease is needed for them)."""
        if not news:
            return {}
        here = {h.name for h in self.fencing.held_here() if lost_too or not h.lost}
        holdings = self.fencing.written_under(lost_too=lost_too)
        holdings += [(h.name, h.written) for h in self.fencing.other_holdings()]
        return {rel: name for rel, name in news.items() if name not in here
                and not any(n == name and written_in(rel, w) for n, w in holdings)}

    @contextlib.contextmanager
    def publishing(self, full: bool, wait: bool) -> Iterator[None]:
        """Around a push: take the leases of the new versions it would
        publish that no holding covers. ``wait``: as long as a run would
        (`datastore sync`, setup); else each is tried once (a command's own
        push: it must not wait on another peer's run for an older run's
        leftovers, and two peers holding leases never wait on each other)."""
        taken = self.ctx.journal.peek()
        cands = self.changes.candidates(taken.paths, full or taken.bulk or not self.ctx.state.tracking)
        cands = {rel for rel in cands if version_lease(self.ctx.rules, rel) is not None}
        news = self._new_versions(self.changes.diff(cands)) if cands else {}
        needed = sorted(set(self._uncovered(news, lost_too=True).values()))
        with contextlib.ExitStack() as stack:
            for name in needed:
                try:
                    stack.enter_context(self.fencing.lease(name, timeout_ms=None if wait else 0))
                except LockTimeoutError:
                    if wait:
                        raise
                    # busy elsewhere: those versions wait for the next push (publishable)
            yield

    def publishable(self, changes: list[Change], held_back: dict[str, str]) -> list[Change]:
        """``changes`` without what may not be published now: a new version
        no live holding of its lease covers, with the records that name it
        (its scheme's ``names``: the run's output record, say, so none is
        published pointing at a number that may still move); and the copies
        of other peers' work (origin.py), never ours to publish. The first
        are recorded in ``held_back``, journaled again for the next push;
        nothing is reported: they are simply not published yet."""
        blocked = set(self._uncovered(self._new_versions(changes)))
        if blocked:
            blocked |= self._naming(blocked)
        copies = self.origin.copy_held_back(changes)
        out = []
        for ch in changes:
            if ch.path in copies:
                continue
            if ch.path in blocked:
                held_back.setdefault(ch.path, "")
            else:
                out.append(ch)
        return out

    def _naming(self, paths: set[str]) -> set[str]:
        """The paths (records) that name the versions ``paths`` lie in, as
        their schemes say (an optional ``names``)."""
        files = _Files(self.ctx.tree)
        out: set[str] = set()
        seen = set()
        for rel in paths:
            scheme = self.ctx.rules.version_scheme(rel)
            key = scheme.split(rel)
            names = getattr(scheme, "names", None)
            if key in seen or names is None:
                continue
            seen.add(key)
            out.update(names(files, *key))
        return out
