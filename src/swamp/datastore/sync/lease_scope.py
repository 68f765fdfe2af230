"""What a thread wrote while it held a lease (its scope), how a pull's
renumbering moves a scope, and what the holder of a lost lease is told.
The fencing that uses them is fencing.py; the lease objects lease.py."""

from __future__ import annotations

from swamp.errors import LeaseLostError
from swamp.util.plain import Plain

from . import scopes
from .compare import parents as _parents
from .lease import Lease
from .renumber import Move
from .rules import PathRules


def version_lease(rules: PathRules, rel: str) -> str | None:
    """The lease ``rel``'s version is allocated under, if it lies in a
    numbered version directory whose scheme names one (publishing.py)."""
    scheme = rules.version_scheme(rel)
    if scheme is None:
        return None
    lease_of = getattr(scheme, "lease", None)
    return None if lease_of is None else lease_of(scheme.split(rel)[0])


class LeaseScope(Plain):
    """What a thread wrote while holding a lease, and where it went if lost."""

    __slots__ = ("written", "aside", "published", "file")
    written: set[str]
    aside: str | None
    #: seqs of the commits published under this holding
    published: list[int]
    #: the same record on disk, for the other processes on this cache
    file: scopes.ScopeFile | None

    def __init__(self, written: set[str] | None = None, aside: str | None = None,
                 published: list[int] | None = None, file: scopes.ScopeFile | None = None) -> None:
        self.written = set() if written is None else written
        self.aside = aside
        self.published = [] if published is None else published
        self.file = file


def follow_scope(written: set[str], moves: list[Move]) -> list[tuple[bool, str]]:
    """Apply ``moves``, in the order they were made, to the scope
    ``written`` (changed in place); the steps (joined?, path) taken, for
    its scope file. A moved version's old paths leave the scope; its new
    ones, and the records rewritten for it, join it if it was written under
    the scope, and its new ones leave it if it was not."""
    steps: list[tuple[bool, str]] = []

    def leave(rel: str) -> None:
        if rel in written:
            written.discard(rel)
            steps.append((False, rel))

    for move in moves:
        inside = any(written_in(p, written) for p in move.olds)
        for rel in move.olds:
            leave(rel)
        if inside:
            for rel in move.dests + move.rewritten:
                written.add(rel)
                steps.append((True, rel))
        else:
            for rel in move.dests:
                leave(rel)
    return steps


def written_in(rel: str, written: set[str]) -> bool:
    """Whether ``rel`` was written under a scope that recorded ``written``
    (a path, a directory above it, or "" for everything)."""
    return "" in written or rel in written or any(a in written for a in _parents(rel))


#: what its holder is told, per cause of a lost lease (``Fencing.loss_cause``)
_CAUSES = {
    "forced": "it was released by force ('swamp datastore lock release --force') while this command held it",
    "gone": "its lease object was deleted while this command held it (a release by force)",
    "stalled": "our heartbeat could not reach the datastore for a whole lease TTL, so another peer may hold it now",
    "taken over": "another peer took it over after our heartbeat stalled",
}


def lost_error(held: Lease, scope: LeaseScope, cause: str = "taken over") -> LeaseLostError:
    kept = (f"what was written under it is kept in {scope.aside} (local only); " if scope.aside else "")
    why = _CAUSES.get(cause, _CAUSES["taken over"])
    if scope.published:
        # Never "nothing was published" once a commit under it landed.
        seqs = ", ".join(map(str, scope.published))
        done = (f"commit {seqs} made under it was published; what was written under it since was not"
                if scope.aside else f"commit {seqs} made under it was published before")
        return LeaseLostError(f"lease {held.name!r} was lost; {done}",
                              hint=kept + why + "; check the result with 'swamp datastore log' and retry what "
                                                "is missing")
    return LeaseLostError(f"lease {held.name!r} was lost; nothing written under it was published",
                          hint=kept + why + "; retry")

