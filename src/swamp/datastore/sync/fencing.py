"""The engine's lease scope and fencing: every path a thread marks dirty
while it holds leases is recorded against them; before each commit every
lease held in this process must still be ours; what was written under a
lease found lost is quarantined (never published, kept aside locally in
``.sync/lost-lease/``). The lease objects themselves are ``lease.py``.

A mixin of ``SyncEngine``."""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

from swamp.errors import CorruptRemoteError, LeaseLostError, ObjectStoreError, ValidationError
from swamp.util import clock
from swamp.util.plain import Plain

from . import scopes
from .compare import parents as _parents
from .counting import Session
from .lease import DEFAULT_TTL_MS, Lease, force_release, read_lease
from .localtree import BlockedPath
from .renumber import Move

def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class Fencing:
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
        if held.taken_from is not None:
            # A takeover: fence the old holding in the log before any work.
            try:
                self._append_fence(name, held.taken_from, held.nonce)
            except BaseException:
                held.release()
                raise
        try:
            # On disk too, so every process on this cache knows what is
            # written under it (scopes.py)
            file = scopes.ScopeFile(self.root / ".sync", name, held.nonce)
        except BaseException:
            held.release()
            raise
        with self._leases_mutex:
            self._leases[held] = _LeaseScope(file=file)
        self.held.add(name, held)
        failed = False
        try:
            yield held
        except BaseException:
            failed = True
            raise
        finally:
            self.held.remove(held)
            # Released under the cache's lock, its scope file removed in the
            # same step: another process's push (which holds that lock) names
            # this holding for what it publishes only while it is live.
            with self._exclusive():
                try:
                    held.release()
                finally:
                    try:
                        if held.lost:
                            self._quarantine(self._session(), held)
                    finally:
                        with self._leases_mutex:
                            scope = self._leases.pop(held)
                        if held.lost:
                            self._published_elsewhere(held, scope)
                        scope.file.remove()
        if held.lost and not failed:
            raise _lost(held, scope, self._loss_cause(held))

    def _break_lease(self, name: str) -> bool:
        """``lock release --force``: break lease ``name`` whatever its state,
        and fence the holding it broke in the log, as a takeover does, so a
        holder that is only slow can never publish under it afterwards."""
        seen = read_lease(self.store, self.layout.lease(name))
        broke = force_release(self.store, self.layout, name)
        nonce = seen[0].get("nonce") if seen else None
        if broke and isinstance(nonce, str) and nonce:
            self._append_fence(name, nonce, "", forced=True)
        return broke

    def _loss_cause(self, held: Lease) -> str:
        """Why ``held`` was lost, for its holder's error: the epoch record
        that fenced it says whether it was taken over or broken by force
        (one GET, on this failure path only); else what the lease object
        saw (lease.py ``lost_reason``)."""
        seq = self.state.fenced().get(held.name, {}).get(held.nonce)
        if seq is not None:
            from . import commitlog

            try:
                fence = commitlog.fetch_one(self._session(), self.layout, seq).fence or {}
            except (ObjectStoreError, CorruptRemoteError):
                fence = {}
            if fence.get("forced") or fence.get("holder") == "":
                return "forced"
            if fence:
                return "taken over"
        return getattr(held, "lost_reason", None) or "taken over"

    def _held_here(self) -> list[Lease]:
        """The leases this thread holds (the datastore's one record)."""
        return [h for h in self.held.handles_here() if isinstance(h, Lease)]

    def _record_under_leases(self, rel: str) -> None:
        held = self._held_here()
        if held:
            with self._leases_mutex:
                for lease in held:
                    scope = self._leases.get(lease)
                    if scope is not None:
                        scope.written.add(rel)
                        scope.file.add(rel)

    def _other_holdings(self) -> list[scopes.Holding]:
        """The holdings on this cache's disk that this engine does not hold
        (another process's, or a killed one's): what was written under
        each, from its scope file."""
        with self._leases_mutex:
            mine = {held.nonce for held in self._leases}
        return [h for h in scopes.load(self.root / ".sync") if h.nonce not in mine]

    def _published_elsewhere(self, held: Lease, scope: "_LeaseScope") -> None:
        """Add to ``scope.published`` the commits another process on this
        cache made under ``held`` (its scope file says), so a lost lease's
        error never says "nothing was published" when some was."""
        for h in scopes.load(self.root / ".sync"):
            if h.nonce == held.nonce:
                scope.published[:] = sorted(set(scope.published) | set(h.published))
        if scope.aside is None:
            scope.aside = self._aside_of(held.nonce)

    def _aside_of(self, nonce: str) -> str | None:
        """Where what was written under holding ``nonce`` was kept aside,
        by whichever process took it back."""
        found = sorted((self.root / ".sync" / "lost-lease").glob(f"*-{nonce[:12]}"))
        return f".sync/lost-lease/{found[-1].name}" if found else None

    def _follow_moves(self, moves: list[Move]) -> None:
        """A pull renumbered versions of ours (renumber.py). What was
        written under a lease stays under it once moved, so if that lease
        is lost the moved version is taken back too, never published under
        its new number. And what was not stays out: moves go highest first,
        so a version of ours written before the lease (a leftover) can land
        on the very path a leased one just left; taking that leftover back
        with the lease's work would withhold a version nobody lost."""
        if not moves:
            return
        with self._leases_mutex:
            for scope in self._leases.values():
                steps = _follow(scope.written, moves)
                if scope.file is not None:
                    scope.file.follow(steps)
        # and those of the holdings of other processes on this cache
        for h in self._other_holdings():
            scopes.follow(self.root / ".sync", h.nonce, _follow(set(h.written), moves))

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
        took_back.append(self._check_other_holdings(s))
        mine = [held for held in lost if held in self._held_here()]
        if mine:
            with self._leases_mutex:
                scope = self._leases[mine[0]]
            self._published_elsewhere(mine[0], scope)
            raise _lost(mine[0], scope, self._loss_cause(mine[0]))
        return any(took_back)

    def _check_other_holdings(self, s: Session) -> bool:
        """The holdings of other processes on this cache (scopes.py): what
        was written under one that the log (as pulled) fenced is taken back
        here, as its holder would; a killed holder's file goes once nothing
        it names is left to publish. True if anything was taken back."""
        fenced = self.state.fenced()
        took = False
        for h in self._other_holdings():
            if h.nonce in fenced.get(h.name, {}):
                took |= self._take_back(s, h.name, h.nonce, h.written, _LeaseScope(aside=self._aside_of(h.nonce)))
            if not h.alive() and h.path is not None:
                if not h.written or not self._diff(self._candidates(h.written - {""}, "" in h.written)):
                    with contextlib.suppress(FileNotFoundError):
                        h.path.unlink()
        return took

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
            # Read under the mutex, so no mark of this process falls between.
            on_disk = scopes.load_one(self.root / ".sync", held.nonce) if scope is not None else None
            if on_disk is not None:
                # The file is the whole truth: it has every path this process
                # marked, and the moves another process's pull made since.
                scope.written = on_disk.written
            written = set(scope.written) if scope is not None else set()
        if not written:
            return False
        if scope.aside is None:
            scope.aside = self._aside_of(held.nonce)  # another process took some back already
        return self._take_back(s, held.name, held.nonce, written, scope)

    def _take_back(self, s: Session, name: str, nonce: str, written: set[str], scope: "_LeaseScope") -> bool:
        """``_quarantine`` for the holding ``nonce`` of lease ``name``, which
        wrote ``written``; ``scope.aside`` is set to where it kept them."""
        if not written:
            return False
        changes = self._diff(self._candidates(written - {""}, "" in written))
        if not changes:
            return False
        if scope.aside is None:
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]
            stamp = clock.isoformat().replace(":", "").replace("+0000", "Z")
            # ends with the holding's nonce: any process finds it (_aside_of)
            scope.aside = f".sync/lost-lease/{stamp}-{slug}-{nonce[:12]}"
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
                if not base.src and self._streamed(base.size):
                    # a large blob: streamed into place, never whole in memory
                    placed, blocked = self._place_blob(s, base.sha256, base.size, [ch.path], None)
                    if blocked:
                        raise BlockedPath(ch.path)
                    st = placed[0][1]
                else:
                    st = self.tree.write(ch.path, self._content(s, ch.path, base))
            except (ObjectStoreError, CorruptRemoteError, BlockedPath) as e:
                _log().warning("could not restore %s after losing lease %r (%s); it is fetched on first read",
                            ch.path, name, e)
                unfetched.append(ch.path)
            else:
                self.tree.remember(ch.path, st, base.sha256)
        with self.state.transaction():
            self.state.set_bases((rel, bases[rel].sha256, bases[rel].size, False, bases[rel].src) for rel in unfetched)
            self.tree.flush_stats()
        _log().warning("lease %r was lost: %d change(s) made under it were not published; kept in %s",
                    name, len(changes), scope.aside)
        return True


class _LeaseScope(Plain):
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


def _follow(written: set[str], moves: list[Move]) -> list[tuple[bool, str]]:
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
        inside = any(_written_in(p, written) for p in move.olds)
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


def _written_in(rel: str, written: set[str]) -> bool:
    """Whether ``rel`` was written under a scope that recorded ``written``
    (a path, a directory above it, or "" for everything)."""
    return "" in written or rel in written or any(a in written for a in _parents(rel))


#: what its holder is told, per cause of a lost lease (``Fencing._loss_cause``)
_CAUSES = {
    "forced": "it was released by force ('swamp datastore lock release --force') while this command held it",
    "gone": "its lease object was deleted while this command held it (a release by force)",
    "stalled": "our heartbeat could not reach the datastore for a whole lease TTL, so another peer may hold it now",
    "taken over": "another peer took it over after our heartbeat stalled",
}


def _lost(held: Lease, scope: _LeaseScope, cause: str = "taken over") -> LeaseLostError:
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
