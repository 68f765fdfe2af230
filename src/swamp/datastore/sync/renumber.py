"""Renumbering (SYNC.md "Renumbering"): a version of ours that was never
published, found taken by a peer's version of the same number, moves to the
next free version number instead of being saved aside as a conflict copy.

The engine knows no data layout. An owner declares a *version scheme* (see
``rules.PathRules.renumber``): which paths belong to a numbered version
directory, and how the contents follow a move (a version field, the records
that name the version). The engine does the rest the same way for every
scheme: it moves only our files (never theirs, never a published one), picks
a number above every version it knows of (on disk, committed, or arriving in
this pull), lets the scheme rewrite what names the old number, and journals
everything it changed so the next push publishes it.
"""

from __future__ import annotations

from typing import Callable, Iterable, NamedTuple

from .journal import Journal
from .localonly import is_synced
from .localtree import LocalTree
from .rules import PathRules
from .state import SyncState
from .version_scheme import VersionScheme

class Move(NamedTuple):
    """One version of ours renumbered: the files it held (``olds``), where
    each went (``dests``, in the same order), and the records the scheme
    rewrote in place because they name it (``rewritten``)."""

    olds: list[str]
    dests: list[str]
    rewritten: list[str]


def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class _Files:
    def __init__(self, tree: LocalTree) -> None:
        self.tree = tree
        self.changed: list[str] = []

    def read(self, rel: str) -> bytes | None:
        try:
            return self.tree.abspath(rel).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def write(self, rel: str, data: bytes) -> None:
        self.tree.write(rel, data)
        self.changed.append(rel)

    def files(self, prefix: str) -> list[str]:
        return sorted(p for p in self.tree.files_under(prefix) if is_synced(p))


class Renumberer:
    """One pull's renumbering, by the schemes ``rules`` declares.
    ``incoming``: every path this pull brings; ``theirs``: those it writes
    from the remote (never ours to move)."""

    def __init__(self, tree: LocalTree, state: SyncState, journal: Journal, rules: PathRules,
                 incoming: Iterable[str], theirs: set[str], report: Callable[[dict], None] | None = None) -> None:
        self.tree = tree
        self.state = state
        self.journal = journal
        self.rules = rules
        self.incoming = list(incoming)
        self.theirs = theirs
        self.report = report
        #: (versions dir, old number) -> the number it moved to
        self.moved: dict[tuple[str, int], int] = {}
        #: every path renumbering moved or rewrote (all journaled)
        self.changed: list[str] = []
        #: per version moved, in the order moved, so what was written under
        #: a lease stays under it once moved, and what was not does not
        #: join it by landing on a path a leased version left (fencing.py)
        self.moves: list[Move] = []

    def _key(self, rel: str) -> tuple[VersionScheme, tuple[str, int]] | None:
        scheme = self.rules.version_scheme(rel)
        return None if scheme is None else (scheme, scheme.split(rel))

    def renumbered(self, rel: str) -> int | None:
        """The number ``rel``'s version of ours moved to in this pull."""
        found = self._key(rel)
        return None if found is None else self.moved.get(found[1])

    def renumber(self, rel: str) -> int | None:
        """Move our unpublished version holding ``rel`` to the next free
        number, and our unpublished versions above it after it, in order
        (so the latest is still our latest run); None (nothing moved) when
        it is not ours to move: some file of it was published, or nothing
        of it is ours."""
        found = self._key(rel)
        if found is None:
            return None
        scheme, key = found
        if key in self.moved:
            return self.moved[key]
        versions, old = key
        first = self._ours(versions, old)
        if first is None:
            return None  # a published version is never moved: the conflict is reported instead
        plan = [(old, first)]
        root = self.tree.abspath(versions)
        above = sorted(int(d.name) for d in root.iterdir() if d.name.isdigit() and int(d.name) > old)
        for v in above:
            ours = self._ours(versions, v)
            if ours is not None and (versions, v) not in self.moved:
                plan.append((v, ours))
        start = self._next_free(versions, [v for v, _ in plan])
        files = _Files(self.tree)
        # Highest first: a new number may be one of ours that moves too
        # (ours at 1 and 2, a peer's 1: 2 moves to 3 before 1 moves to 2).
        for i, (v, ours) in reversed(list(enumerate(plan))):
            new = start + i
            vdir = f"{versions}/{v}"
            dests: list[str] = []
            for p in ours:
                to = f"{versions}/{new}/{p[len(vdir) + 1:]}"
                self.tree.move_out(p, to)
                self.journal.append(to)
                dests.append(to)
            rewritten = list(scheme.rewrite(files, versions, v, new))
            for p in rewritten:
                self.journal.append(p)
            self.changed += dests + rewritten
            self.moves.append(Move(ours, dests, rewritten))
            self.moved[(versions, v)] = new
            _log().info("renumbered our unpublished version %s/%d to %d (a peer published %d first)",
                     versions, v, new, old)
        if self.report is not None:
            for v, _ours in plan:  # reported lowest first, whatever order they moved in
                self.report({"versions": versions, "from": v, "to": self.moved[(versions, v)]})
        return self.moved[key]

    def _ours(self, versions: str, v: int) -> list[str] | None:
        """Our files of version ``v``, when it is wholly ours and
        unpublished: none of its files has a base or comes in this pull."""
        ours = [p for p in self.tree.files_under(f"{versions}/{v}") if is_synced(p) and p not in self.theirs]
        if not ours or self.state.bases(ours) or self.state.copies(ours):
            return None  # (a copy of another peer's version, origin.py: not ours either)
        return ours

    def _next_free(self, versions: str, moving: list[int]) -> int:
        """Above every version of ``versions`` this cache knows of: on disk
        (tombstones included), committed (fetched or not), or in this pull;
        but not above our own ``moving`` ones, which leave their numbers
        (counting them skipped numbers: ours at 2 and 3, a peer's 2, made
        ours 4 and 5). Nor below them all: the last one moved ends at least
        where our latest was, so ``latest`` never goes back."""
        top = 0
        root = self.tree.abspath(versions)
        if root.is_dir():
            top = max([int(d.name) for d in root.iterdir() if d.name.isdigit() and int(d.name) not in moving],
                      default=0)
        prefix = versions + "/"
        known = list(self.state.base_paths_under(versions)) + [p for p in self.incoming if p.startswith(prefix)]
        for p in known:
            head = p[len(prefix):].split("/", 1)[0]
            if head.isdigit():
                top = max(top, int(head))
        return max(top + 1, max(moving) - len(moving) + 1)
