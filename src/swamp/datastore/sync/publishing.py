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
  or another process's on this cache: ``_leases_of``), or a holding of
  that lease this thread has now;
- otherwise the push takes the lease itself, before the cache's lock and
  before its pull, so that pull (which renumbers ours above a peer's) and
  the commit both happen under it. A push that already holds other leases
  (a command's session publishing an older run's leftovers) tries each
  such lease once and does not wait: two peers could otherwise wait on each
  other; when one is busy, the push publishes only what was written under
  this thread's own holdings, and leaves the rest journaled for the next push.

Whatever the push cannot publish under a lease stays local and journaled;
``_publishable`` is the last check, right before every diff becomes a
commit. A mixin of ``SyncEngine``."""

from __future__ import annotations

import contextlib
import threading
from typing import Iterable, Iterator

from swamp.errors import LockTimeoutError

from .commitlog import Change
from .compare import parents as _parents
from .fencing import _written_in


class Publishing:
    _publish_local = threading.local()

    def _version_lease(self, rel: str) -> str | None:
        """The lease ``rel``'s version is allocated under, if it lies in a
        numbered version directory whose scheme names one."""
        scheme = self.rules.version_scheme(rel)
        if scheme is None:
            return None
        lease_of = getattr(scheme, "lease", None)
        return None if lease_of is None else lease_of(scheme.split(rel)[0])

    def _new_versions(self, changes: Iterable[Change]) -> dict[str, str]:
        """path -> lease, for the puts of ``changes`` that add a file to a
        version directory (no base: never published here)."""
        wanted = {}
        for ch in changes:
            if ch.op == "put":
                name = self._version_lease(ch.path)
                if name is not None:
                    wanted[ch.path] = name
        if not wanted:
            return {}
        published = self.state.bases(wanted)
        return {rel: name for rel, name in wanted.items() if rel not in published}

    def _uncovered(self, news: dict[str, str], *, lost_too: bool = False) -> dict[str, str]:
        """Those of ``news`` that no live holding of their lease covers: one
        this thread has, or one the path was written under (this process's
        or, by its scope file, another's on this cache). ``lost_too``: a
        lost holding covers its paths as well (they are taken back, never
        published: no lease is needed for them)."""
        if not news:
            return {}
        here = {h.name for h in self._held_here() if lost_too or not h.lost}
        with self._leases_mutex:
            holdings = [(h.name, set(scope.written)) for h, scope in self._leases.items() if lost_too or not h.lost]
        holdings += [(h.name, h.written) for h in self._other_holdings()]
        return {rel: name for rel, name in news.items() if name not in here
                and not any(n == name and _written_in(rel, w) for n, w in holdings)}

    @contextlib.contextmanager
    def _publishing(self, full: bool) -> Iterator[None]:
        """Around a push: take the leases of the new versions it would
        publish that no holding covers (see the module's docstring)."""
        taken = self.journal.peek()
        cands = self._candidates(taken.paths, full or taken.bulk or not self.state.tracking)
        cands = {rel for rel in cands if self._version_lease(rel) is not None}
        news = self._new_versions(self._diff(cands)) if cands else {}
        needed = sorted(set(self._uncovered(news, lost_too=True).values()))
        waits = not self._held_here()  # holding others: never wait (no two peers wait on each other)
        local = self._publish_local
        before = getattr(local, "narrow", False)
        with contextlib.ExitStack() as stack:
            for name in needed:
                try:
                    stack.enter_context(self.lease(name, timeout_ms=None if waits else 0))
                except LockTimeoutError:
                    if waits:
                        raise
                    local.narrow = True  # busy elsewhere: publish only our own holdings' work
            try:
                yield
            finally:
                local.narrow = before

    def _publishable(self, changes: list[Change], held_back: dict[str, str]) -> list[Change]:
        """``changes`` without what may not be published now: a new version
        no live holding of its lease covers (and, when a leftover's lease
        was busy, everything not written under this thread's holdings).
        Those are recorded in ``held_back``, journaled again for the next
        push; nothing is reported: they are simply not published yet."""
        if getattr(self._publish_local, "narrow", False):
            mine = set()
            with self._leases_mutex:
                for lease in self._held_here():
                    scope = self._leases.get(lease)
                    if scope is not None:
                        mine |= scope.written
            keep = [ch for ch in changes
                    if "" in mine or ch.path in mine or any(a in mine for a in _parents(ch.path))]
        else:
            keep = changes
        blocked = set(self._uncovered(self._new_versions(keep)))
        copies = self._copy_held_back(keep)  # another peer's work (origin.py): never ours to publish
        kept = {id(ch) for ch in keep}
        out = []
        for ch in changes:
            if id(ch) in kept and ch.path not in blocked and ch.path not in copies:
                out.append(ch)
            elif ch.path not in copies:
                held_back.setdefault(ch.path, "")
        return out
