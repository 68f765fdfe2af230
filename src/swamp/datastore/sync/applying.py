"""One pull's apply (SYNC.md "Pull"), step by step: decide each incoming
path (already equal, replace, or a conflict), say what is about to be
written, download and write (each path checked again right before its
rename), delete, write again what a directory stood in the way of, resolve
the conflicts, and move the bases and the head in one transaction once
every file is durable. pull.py gathers what comes in and hands it here."""

from __future__ import annotations

from swamp.util.atomic import DurableBatch

from .blobs import fetch_blob, fetch_blob_file
from .commitlog import Change
from .compare import content_id as _sha
from .conflicts import Incoming, Resolver
from .contents import committed_content
from .counting import Session
from .engine_state import EngineState
from .fencing import Fencing
from .localtree import BlockedPath, FileState
from .progress import Progress
from .renumber import Renumberer
from .state import Base
from .transfers import Transfers, copy_checked


class Applying:
    """``incoming``: path -> what a peer committed there; ``own``: our own
    commits of a push killed after its commit point (they become the base
    whatever the disk holds); ``srcs``/``own_srcs``: path -> the record
    carrying its content inline ("" for a blob)."""

    def __init__(self, ctx: EngineState, transfers: Transfers, fencing: Fencing, s: Session,
                 incoming: dict[str, Incoming], own: dict[str, Change], srcs: dict[str, str],
                 own_srcs: dict[str, str]) -> None:
        self.ctx, self.transfers, self.fencing, self.s = ctx, transfers, fencing, s
        self.incoming, self.own, self.srcs, self.own_srcs = incoming, own, srcs, own_srcs
        # Contents the records carried inline: in hand, so never fetched,
        # and written at once even by a lazily hydrated cache.
        self.inline = {inc.change.sha256: inc.change.inline for inc in incoming.values()
                       if inc.change.inline is not None}
        self.sizes = {inc.change.sha256: inc.change.size for inc in incoming.values() if inc.change.op == "put"}
        self.fetches: dict[str, list[str]] = {}
        self.removes: list[str] = []
        self.conflicted: list[tuple[str, Base | None, FileState | None, Incoming]] = []
        self.unhydrated: set[str] = set()
        self.new_base: dict[str, Change] = dict(own)
        #: what each path held on disk when we decided to replace it
        self.expect: dict[str, str | None] = {}
        #: paths written by another process after we decided to replace them
        self.raced: list[str] = []
        # The pool downloads each blob and writes its files atomically, each
        # fsynced; their directories are fsynced once each, at the end,
        # before the state claims the files.
        self.batch = DurableBatch()

    def run(self, last: int) -> None:
        """Apply, and move the head to ``last``."""
        ctx = self.ctx
        ctx.tree.forget_dirs()
        self.bases = ctx.state.bases(rel for rel in self.incoming if rel not in self.own)
        # copies of other peers' work, from attaching again (origin.py): the remote's replaces them
        self.copies = ctx.state.copies(self.incoming)
        self._decide()
        # Before the first byte hits the disk: say what we are about to write.
        ctx.state.add_intents([(rel, sha) for sha, rels in self.fetches.items() for rel in rels]
                              + [(rel, None) for rel in self.removes]
                              + [(rel, inc.change.sha256) for rel, _b, _l, inc in self.conflicted])
        self.progress = Progress(ctx.on_progress, "download", sum(map(len, self.fetches.values())),
                                 sum(self.sizes[sha] * len(rels) for sha, rels in self.fetches.items()))
        retry = [r for r in ctx.pool.map(self._fetch_and_write, self.fetches.items()) if r[2]]
        self._remove_all()
        self._write_again(retry)
        self.batch.sync(ctx.pool.map)
        for rel in sorted(self.raced):
            self.unhydrated.discard(rel)
            self.conflicted.append((rel, self._base(rel), ctx.tree.current(rel), self.incoming[rel]))
        self._resolve_conflicts()
        self._settle(last)

    def _base(self, rel: str) -> Base | None:
        return _own_base(self.own[rel], self.own_srcs[rel]) if rel in self.own else self.bases.get(rel)

    def _local_view(self, rel: str, base: Base | None) -> tuple[FileState | None, bool]:
        """(what the path holds, whether that is only the not-yet-fetched base)."""
        cur = self.ctx.tree.current(rel)
        if cur is None and base is not None and not base.hydrated:
            return FileState(base.sha256, base.size), True
        return cur, False

    def _decide(self) -> None:
        """Each incoming path: equal already, to replace (fetch or remove),
        or changed on both sides (a conflict)."""
        intents = self.ctx.state.intents()
        lazy = self.ctx.hydration == "lazy"
        for rel in sorted(self.incoming):
            inc = self.incoming[rel]
            theirs = inc.change
            self.new_base[rel] = theirs
            base = self._base(rel)
            local, virtual = self._local_view(rel, base)
            self.expect[rel] = None if virtual else _sha(local)
            if _sha(local) == _sha(theirs):
                if virtual:
                    self.unhydrated.add(rel)
            elif (_sha(local) == _sha(base) or _sha(local) in intents.get(rel, ())
                  or (local is not None and self.copies.get(rel) == _sha(local))):
                if theirs.op == "delete":
                    self.removes.append(rel)
                elif lazy and self.ctx.rules.is_lazy(rel) and theirs.inline is None:
                    self.unhydrated.add(rel)
                    self.removes.append(rel)  # never leave the old content readable
                else:
                    self.fetches.setdefault(theirs.sha256, []).append(rel)
            else:
                self.conflicted.append((rel, base, local, inc))

    # Another process on this cache may write a path after we decided to
    # replace it: each path is checked again (stat, and hash if need be)
    # right before its rename or delete; one that changed is left as it
    # is and resolved as a conflict, never overwritten.
    def _recheck(self, rel: str) -> None:
        if _sha(self.ctx.tree.current(rel)) != self.expect[rel]:
            raise _LocalChanged(rel)

    def _write_all(self, sha: str, data: bytes, rels: list[str], first: bool = False) -> list[str]:
        """Write ``data`` at each of ``rels``; the paths in the way."""
        blocked = []
        for rel in rels:
            try:
                st = self.ctx.tree.write(rel, data, self.batch, lambda rel=rel: self._recheck(rel))
            except BlockedPath:
                blocked.append(rel)
            except _LocalChanged:
                self.raced.append(rel)
            else:
                self.ctx.tree.remember(rel, st, sha)
                self.s.add(filesPulled=1)
            if first:
                self.progress.advance(1, self.sizes[sha])
        return blocked

    def _stream_all(self, sha: str, rels: list[str]) -> list[str]:
        """Large: streamed into place, never whole in memory; the paths in the way."""
        placed, blocked = self._place_checked(sha, self.sizes[sha], rels)
        for rel, st in placed:
            self.ctx.tree.remember(rel, st, sha)
            self.s.add(filesPulled=1)
        return blocked

    def _fetch_and_write(self, item: tuple[str, list[str]]) -> tuple[str, bytes | None, list[str]]:
        """(sha, its bytes if a path was in the way (None: streamed), the paths in the way)."""
        sha, rels = item
        data = self.inline.get(sha)
        if data is None and self.ctx.streamed(self.sizes[sha]):
            blocked = self._stream_all(sha, rels)
            self.progress.advance(len(rels), self.sizes[sha] * len(rels))
            return sha, None, blocked
        if data is None:
            data = fetch_blob(self.s, self.ctx.layout, sha)
        else:
            self.s.add(bytesPulled=len(data))
        blocked = self._write_all(sha, data, rels, first=True)
        return sha, data if blocked else b"", blocked

    def _place_checked(self, sha: str, size: int, rels: list[str]) -> tuple[list, list[str]]:
        """``Transfers.place_blob``, each path checked right before its
        rename (a path that changed goes to ``raced``); the blob is
        downloaded once, the other paths copied from the first."""
        tree, s = self.ctx.tree, self.s
        placed, blocked = [], []
        for rel in rels:
            try:
                if not placed:
                    p, b = self.transfers.place_blob(s, sha, size, [rel], self.batch,
                                                     lambda rel=rel: self._recheck(rel))
                    placed += p
                    blocked += b
                    continue
                source = tree.abspath(placed[0][0])

                def fill(tmp, rel=rel) -> None:
                    if not copy_checked(source, tmp, sha):  # changed under us: fetched instead
                        fetch_blob_file(s, self.ctx.layout, sha, tmp, size)
                    self._recheck(rel)

                placed.append((rel, tree.write_from(rel, fill, self.batch)))
            except _LocalChanged:
                self.raced.append(rel)
            except BlockedPath:
                blocked.append(rel)
        return placed, blocked

    def _remove_all(self) -> None:
        for rel in self.removes:
            try:
                self._recheck(rel)
            except _LocalChanged:
                self.raced.append(rel)
                continue
            if self.ctx.tree.abspath(rel).is_file():
                self.s.add(filesDeleted=1)
            self.ctx.tree.remove(rel, self.batch)

    def _write_again(self, retry: list[tuple[str, bytes | None, list[str]]]) -> None:
        """A file that a directory stood in the way of is written again once
        this pull's deletes are done: they may have emptied it (a directory
        replaced by a file elsewhere). One still in the way (a local
        directory with files of ours, or a local file where its directory
        must be) is committed but not here: its base is recorded as not
        fetched, so it is neither received nor a local delete, a read
        fetches it once the way is clear, and the conflict is reported."""
        for sha, data, rels in retry:
            still = self._stream_all(sha, rels) if data is None else self._write_all(sha, data, rels)
            for rel in still:
                self.unhydrated.add(rel)
                inc = self.incoming[rel]
                self.s.conflict({"path": rel, "class": self.ctx.rules.classify(rel).value, "seq": inc.seq,
                                 "peer": inc.peer, "theirs": "put", "savedAs": None,
                                 "reason": "a local directory or file is in the way; theirs was not written"})

    def _theirs(self, sha: str) -> bytes:
        data = self.inline.get(sha)
        return fetch_blob(self.s, self.ctx.layout, sha) if data is None else data

    def _place(self, rel: str, ch: Change, before) -> None:
        """Put their ``ch`` at ``rel`` for the resolver (``before()`` right before)."""
        tree = self.ctx.tree
        if ch.inline is None and self.ctx.streamed(ch.size):
            placed, blocked = self.transfers.place_blob(self.s, ch.sha256, ch.size, [rel], None, before)
            if blocked:
                raise BlockedPath(rel)
            tree.remember(rel, placed[0][1], ch.sha256)
        else:
            data = self._theirs(ch.sha256)
            before()
            tree.remember(rel, tree.write(rel, data), ch.sha256)

    def _resolve_conflicts(self) -> None:
        ctx, s = self.ctx, self.s
        mine = {rel for rel, _b, _l, _i in self.conflicted}
        renumber = Renumberer(ctx.tree, ctx.state, ctx.journal, ctx.rules, self.incoming,
                              {rel for rel in self.incoming if rel not in mine}, s.renumber)
        resolver = Resolver(ctx.tree, ctx.state, ctx.journal, ctx.peer, ctx.rules, self._theirs,
                            lambda rel, base: committed_content(s, ctx.layout, rel, base), self._place, renumber)
        for rel, base, local, inc in self.conflicted:
            report = resolver.resolve(rel, base, local, inc)
            if report is not None:
                s.conflict(report)
            if rel in resolver.blocked:
                self.unhydrated.add(rel)
            elif inc.change.op == "put":
                s.add(filesPulled=1)
            else:
                s.add(filesDeleted=1)
        ctx.renumbered.update(renumber.changed)
        self.fencing.follow_moves(renumber.moves)

    def _settle(self, last: int) -> None:
        """The bases and the head move in one transaction, every file durable."""
        state, unhydrated = self.ctx.state, self.unhydrated
        with state.transaction():
            state.set_bases((rel, ch.sha256, ch.size, rel not in unhydrated, self.srcs.get(rel, ""))
                            for rel, ch in self.new_base.items() if ch.op == "put")
            state.drop_bases(rel for rel, ch in self.new_base.items() if ch.op == "delete")
            self.ctx.tree.flush_stats()
            state.set_head(last)
            state.drop_copies(self.copies)
            state.clear_pending(last)
            state.clear_intents()


class _LocalChanged(Exception):
    """A path changed on disk after the pull decided to replace it."""


def _own_base(change: Change, src: str) -> Base | None:
    return None if change.op == "delete" else Base(change.sha256, change.size, True, src)
