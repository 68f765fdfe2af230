"""The engine's lease scope and fencing: every path a thread marks dirty
while it holds leases is recorded against them; before each commit every
lease held in this process must still be ours; what was written under a
lease found lost is quarantined (never published, kept aside locally in
``.sync/lost-lease/``, quarantine.py). The lease objects themselves are
``lease.py``; a scope and its moves ``lease_scope.py``.

A collaborator of ``SyncEngine``: it owns the scopes of the leases held in
this process; the epoch record that fences a holding taken over is
appended by the engine's records (records.py), handed in as a function."""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator

from swamp.datastore.objectstore.base import ObjectStoreError
from swamp.errors import LeaseLostError, ValidationError

from . import commitlog, scopes
from .changes import LocalChanges
from .commitlog import Change, Commit
from .compare import parents as _parents
from .counting import Session
from .engine_state import EngineState
from .errors import CorruptRemoteError
from .lease import DEFAULT_TTL_MS, Lease, force_release, read_lease
from .lease_scope import LeaseScope, follow_scope, lost_error, version_lease
from .quarantine import TakeBack
from .renumber import Move


class Fencing:
    def __init__(self, ctx: EngineState, changes: LocalChanges, takeback: TakeBack,
                 append_fence: Callable[..., int]) -> None:
        self.ctx, self.changes, self.takeback = ctx, changes, takeback
        #: records.Records.append_fence: the epoch record of a takeover
        self._append_fence = append_fence
        self._leases: dict[Lease, LeaseScope] = {}
        self._leases_mutex = threading.Lock()

    @contextlib.contextmanager
    def lease(self, name: str, *, ttl_ms: int = DEFAULT_TTL_MS, timeout_ms: int | None = None,
              cancelled: threading.Event | None = None) -> Iterator[Lease]:
        """Hold lease ``name`` (e.g. ``model/<type>/<id>``). LockTimeoutError
        (exit 75) names the holder; a set ``cancelled`` ends the wait
        (lease.py ``cancelled_error``).

        Every path this thread marks dirty meanwhile is recorded as written
        under the lease. Once it is lost (a failed heartbeat, the check
        before a commit, or a release that finds it taken over), nothing
        written under it is ever published: a push (by any thread) refuses
        to commit and quarantines those paths first, and so does leaving
        this block; a push by this thread, and leaving the block normally,
        raise LeaseLostError."""
        if not name:
            raise ValidationError("a lease needs a name")
        held = Lease(self.ctx.store, self.ctx.layout, name, peer=self.ctx.peer, ttl_ms=ttl_ms, timeout_ms=timeout_ms,
                     cancelled=cancelled)
        try:
            held.acquire()
        except BaseException:
            if held.taken_from is not None:
                # Taken over, then let go at once (a cancel): the old holding is
                # fenced all the same; the next holder will create the lease
                # afresh, which fences nothing, and a holder that was only slow
                # must not publish under it meanwhile.
                self._append_fence(name, held.taken_from, held.nonce)
            raise
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
            file = scopes.ScopeFile(self.ctx.root / ".sync", name, held.nonce)
        except BaseException:
            held.release()
            raise
        with self._leases_mutex:
            self._leases[held] = LeaseScope(file=file)
        self.ctx.held.add(name, held)
        failed = False
        try:
            yield held
        except BaseException:
            failed = True
            raise
        finally:
            self.ctx.held.remove(held)
            # Released under the cache's lock, its scope file removed in the
            # same step: another process's push (which holds that lock) names
            # this holding for what it publishes only while it is live.
            with self.ctx.exclusive():
                try:
                    held.release()
                finally:
                    try:
                        if held.lost:
                            self.quarantine(self.ctx.session(), held)
                    finally:
                        with self._leases_mutex:
                            scope = self._leases.pop(held)
                        if held.lost:
                            self._published_elsewhere(held, scope)
                        scope.file.remove()
        if held.lost and not failed:
            raise lost_error(held, scope, self.loss_cause(held))

    def break_lease(self, name: str) -> bool:
        """``lock release --force``: break lease ``name`` whatever its state,
        and fence the holding it broke in the log, as a takeover does, so a
        holder that is only slow can never publish under it afterwards."""
        seen = read_lease(self.ctx.store, self.ctx.layout.lease(name))
        broke = force_release(self.ctx.store, self.ctx.layout, name)
        nonce = seen[0].get("nonce") if seen else None
        if broke and isinstance(nonce, str) and nonce:
            self._append_fence(name, nonce, "", forced=True)
        return broke

    def loss_cause(self, held: Lease) -> str:
        """Why ``held`` was lost, for its holder's error: the epoch record
        that fenced it says whether it was taken over or broken by force
        (one GET, on this failure path only); else what the lease object
        saw (lease.py ``lost_reason``)."""
        seq = self.ctx.state.fenced().get(held.name, {}).get(held.nonce)
        if seq is not None:
            try:
                fence = commitlog.fetch_one(self.ctx.session(), self.ctx.layout, seq).fence or {}
            except (ObjectStoreError, CorruptRemoteError):
                fence = {}
            if fence.get("forced") or fence.get("holder") == "":
                return "forced"
            if fence:
                return "taken over"
        return getattr(held, "lost_reason", None) or "taken over"

    def holdings(self) -> list[Lease]:
        """The lease holdings of this process (every thread's)."""
        with self._leases_mutex:
            return list(self._leases)

    def scope_of(self, held: Lease) -> LeaseScope | None:
        with self._leases_mutex:
            return self._leases.get(held)

    def written_under(self, *, lost_too: bool) -> list[tuple[str, set[str]]]:
        """(lease name, what was written under it) of this process's
        holdings (a lost one's too with ``lost_too``)."""
        with self._leases_mutex:
            return [(h.name, set(scope.written)) for h, scope in self._leases.items() if lost_too or not h.lost]

    def held_here(self) -> list[Lease]:
        """The leases this thread holds (the datastore's one record)."""
        return [h for h in self.ctx.held.handles_here() if isinstance(h, Lease)]

    def record_under_leases(self, rel: str) -> None:
        held = self.held_here()
        if held:
            with self._leases_mutex:
                for lease in held:
                    scope = self._leases.get(lease)
                    if scope is not None:
                        scope.written.add(rel)
                        scope.file.add(rel)

    def other_holdings(self) -> list[scopes.Holding]:
        """The holdings on this cache's disk that this engine does not hold
        (another process's, or a killed one's): what was written under
        each, from its scope file."""
        with self._leases_mutex:
            mine = {held.nonce for held in self._leases}
        return [h for h in scopes.load(self.ctx.root / ".sync") if h.nonce not in mine]

    def _published_elsewhere(self, held: Lease, scope: LeaseScope) -> None:
        """Add to ``scope.published`` the commits another process on this
        cache made under ``held`` (its scope file says), so a lost lease's
        error never says "nothing was published" when some was."""
        for h in scopes.load(self.ctx.root / ".sync"):
            if h.nonce == held.nonce:
                scope.published[:] = sorted(set(scope.published) | set(h.published))
        if scope.aside is None:
            scope.aside = self._aside_of(held.nonce)

    def _aside_of(self, nonce: str) -> str | None:
        """Where what was written under holding ``nonce`` was kept aside,
        by whichever process took it back."""
        found = sorted((self.ctx.root / ".sync" / "lost-lease").glob(f"*-{nonce[:12]}"))
        return f".sync/lost-lease/{found[-1].name}" if found else None

    def follow_moves(self, moves: list[Move]) -> None:
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
                steps = follow_scope(scope.written, moves)
                if scope.file is not None:
                    scope.file.follow(steps)
        # and those of the holdings of other processes on this cache
        for h in self.other_holdings():
            scopes.follow(self.ctx.root / ".sync", h.nonce, follow_scope(set(h.written), moves))

    def check_leases(self, s: Session) -> bool:
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
        took_back = [self.quarantine(s, held) for held in lost]
        took_back.append(self._check_other_holdings(s))
        mine = [held for held in lost if held in self.held_here()]
        if mine:
            with self._leases_mutex:
                scope = self._leases[mine[0]]
            self._published_elsewhere(mine[0], scope)
            raise lost_error(mine[0], scope, self.loss_cause(mine[0]))
        return any(took_back)

    def _check_other_holdings(self, s: Session) -> bool:
        """The holdings of other processes on this cache (scopes.py): what
        was written under one that the log (as pulled) fenced is taken back
        here, as its holder would; a killed holder's file goes once nothing
        it names is left to publish. True if anything was taken back."""
        fenced = self.ctx.state.fenced()
        took = False
        for h in self.other_holdings():
            if h.nonce in fenced.get(h.name, {}):
                aside = LeaseScope(aside=self._aside_of(h.nonce))
                took |= self.takeback.take_back(s, h.name, h.nonce, h.written, aside)
            if not h.alive() and h.path is not None:
                if not h.written or not self.changes.of(h.written):
                    with contextlib.suppress(FileNotFoundError):
                        h.path.unlink()
        return took

    def quarantine(self, s: Session, held: Lease) -> bool:
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
            on_disk = scopes.load_one(self.ctx.root / ".sync", held.nonce) if scope is not None else None
            if on_disk is not None:
                # The file is the whole truth: it has every path this process
                # marked, and the moves another process's pull made since.
                scope.written = on_disk.written
            written = set(scope.written) if scope is not None else set()
        if not written:
            return False
        if scope.aside is None:
            scope.aside = self._aside_of(held.nonce)  # another process took some back already
        return self.takeback.take_back(s, held.name, held.nonce, written, scope)

    # ------------------------------------------------ fencing at the commit point
    def leases_of(self, changes: list[Change]) -> dict[str, str]:
        """The lease holdings (name -> nonce) under which any of ``changes``
        was written: the commit names them, so that every peer ignores it
        if the log fenced one of them before it (commitlog.fenced_out)."""
        paths = {c.path for c in changes}
        wanted = paths | {a for p in paths for a in _parents(p)} | {""}
        with self._leases_mutex:
            out = {held.name: held.nonce for held, scope in self._leases.items() if scope.written & wanted}
        # and what another process on this cache wrote under its own (its
        # scope file, scopes.py): a fenced one was taken back before this
        for h in self.other_holdings():
            if h.written & wanted:
                out.setdefault(h.name, h.nonce)
        # and the lease this thread holds for a new version it publishes (publishing.py)
        for held in self.held_here():
            if not held.lost and held.name not in out and any(version_lease(self.ctx.rules, p) == held.name
                                                              for p in paths):
                out[held.name] = held.nonce
        return out

    def fenced_leases(self) -> None:
        """A lease holding of this process that the log (as pulled) fenced
        was taken over: it is lost, whatever its heartbeat says, and the
        lease check that follows takes back what was written under it."""
        fenced = self.ctx.state.fenced()
        with self._leases_mutex:
            held = list(self._leases)
        for lease in held:
            if lease.nonce in fenced.get(lease.name, {}):
                lease.lost = True

    def published_under(self, commit: Commit) -> None:
        with self._leases_mutex:
            for held, scope in self._leases.items():
                if commit.leases.get(held.name) == held.nonce:
                    scope.published.append(commit.seq)
        # in the scope files too, for a holder in another process (scopes.py)
        for nonce in commit.leases.values():
            scopes.published(self.ctx.root / ".sync", nonce, commit.seq)

