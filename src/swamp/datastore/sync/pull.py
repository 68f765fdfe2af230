"""Pull and apply (SYNC.md "Pull"): list the log after ``head``, start from
a checkpoint when the log no longer reaches back to it, fetch the new
commits and apply each path's net change where the local file still equals
its base; a path changed on both sides goes to the conflict resolver. The
head moves, with the bases it implies, in one transaction once every file
is durable.

A mixin of ``SyncEngine``: it uses the engine's store layout, state, tree,
journal, rules, pool and transfer helpers."""

from __future__ import annotations

import time

from swamp.util.atomic import DurableBatch

from . import checkpoint, commitlog, identity
from .blobs import fetch_blob, fetch_blob_file
from .commitlog import Change
from .compare import content_id as _sha
from .conflicts import Incoming, Resolver
from .counting import Session
from .localtree import BlockedPath, FileState
from .progress import Progress
from .renumber import Renumberer
from .state import Base
from .transfers import _copy_checked

def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class Puller:
    def _local_view(self, rel: str, base: Base | None) -> tuple[FileState | None, bool]:
        """(what the path holds, whether that is only the not-yet-fetched base)."""
        cur = self.tree.current(rel)
        if cur is None and base is not None and not base.hydrated:
            return FileState(base.sha256, base.size), True
        return cur, False

    def _place_checked(self, s: Session, sha: str, size: int, rels: list[str], batch: DurableBatch,
                       recheck, raced: list[str]):
        """``_place_blob``, each path checked right before its rename
        (``recheck`` raises _LocalChanged: that path goes to ``raced``); the
        blob is downloaded once, the other paths copied from the first."""
        placed, blocked = [], []
        for rel in rels:
            try:
                if not placed:
                    p, b = self._place_blob(s, sha, size, [rel], batch, lambda rel=rel: recheck(rel))
                    placed += p
                    blocked += b
                    continue
                source = self.tree.abspath(placed[0][0])

                def fill(tmp, rel=rel) -> None:
                    if not _copy_checked(source, tmp, sha):  # changed under us: fetched instead
                        fetch_blob_file(s, self.layout, sha, tmp, size)
                    recheck(rel)

                placed.append((rel, self.tree.write_from(rel, fill, batch)))
            except _LocalChanged:
                raced.append(rel)
            except BlockedPath:
                blocked.append(rel)
        return placed, blocked

    def _pull_into(self, s: Session) -> None:
        head = self.state.head
        # One LIST from the commit at head: it also says whether this is
        # still the remote (and the chain) this cache applied (identity.py).
        # What it shows is as of when it was asked, not when the apply
        # (downloads included) ends: the head-is-current rule counts from here.
        listed_at = time.monotonic()
        listed = commitlog.list_from(s, self.layout, head)
        identity.check_listing(self.state, f"{s.name}{self.layout.namespace}", head, listed)
        seqs = sorted(q for q in listed if q > head)
        parent_id, known_etag = self.state.tip()
        if head and parent_id is None and head in listed:
            parent_id = commitlog.fetch_one(s, self.layout, head).id  # state from an older swamp: once
        if not seqs:
            if head and parent_id is not None and known_etag is None:
                self.state.set_tip(head, parent_id, listed.get(head))
            self._current = (head, listed_at)
            return
        start, tree, rejected, fenced = head, None, [], self.state.fenced()
        if head == 0:
            self._ensure_format(s, create=False)
        if head == 0 or seqs[0] != head + 1:
            # A new peer, or one the retention window left behind: start
            # from the newest checkpoint that the listed log continues,
            # once the remote is known to be this cache's.
            identity.check_identity(self.state, s, self.layout)
            usable = [c for c in checkpoint.seqs(s, self.layout) if head < c <= seqs[-1] and c >= seqs[0] - 1]
            if usable:
                start = usable[-1]
                tree, rejected, parent_id, ck_fenced = checkpoint.fetch_full(s, self.layout, start)
                for name, nonces in ck_fenced.items():
                    for nonce, seq in nonces.items():
                        fenced.setdefault(name, {}).setdefault(nonce, seq)
                if parent_id is None and start in listed:
                    parent_id = commitlog.fetch_one(s, self.layout, start).id  # a checkpoint from before ids
        seqs = [q for q in seqs if q > start]
        commitlog.check_contiguous(seqs, start)
        commits = commitlog.fetch(s, self.layout, seqs, self._pool)
        # Nothing is applied from a commit that does not extend the chain
        # this cache stands on (a commit made on a trimmed seq, say).
        commitlog.check_chain(commits, parent_id, start)
        tip = (commits[-1].id, listed.get(commits[-1].seq)) if commits else (parent_id, listed.get(start))

        incoming: dict[str, Incoming] = {}
        own: dict[str, Change] = {}
        srcs: dict[str, str] = {}  # path -> the record carrying its content inline
        own_srcs: dict[str, str] = {}
        if tree is not None:
            bases = self.state.all_bases()
            for path, (sha, size, data) in tree.items():
                b = bases.get(path)
                if b is None or b.sha256 != sha:
                    incoming[path] = Incoming(Change(path, "put", sha, size, data), start, "checkpoint",
                                             parent_id or "")
                    srcs[path] = "" if data is None else f"checkpoint:{start}"
            for path in bases.keys() - tree.keys():
                incoming[path] = Incoming(Change(path, "delete"), start, "checkpoint", parent_id or "")
        pending = self.state.pending()
        for c in commits:
            rejected += c.rejected
            if commitlog.fenced_out(c, fenced):
                # Made under a lease holding fenced earlier in the log: every
                # peer ignores it alike (a holder that lost its lease).
                _log().warning("commit %d by %s was made under a lease taken over before it; ignored", c.seq, c.peer)
                continue
            commitlog.add_fence(c, fenced)
            if c.upgrade is not None:
                # The remote moved to a newer format here (upgrade_format):
                # from now on this peer may inline contents too. Before the
                # head moves is harmless: a commit of ours lands after this
                # record only once a pull applied it.
                self._saw_upgrade(c.upgrade)
            mine = c.id in pending
            for ch in c.changes:
                # where the path's newest content is kept (own or theirs)
                srcs[ch.path] = "" if ch.inline is None else f"log:{c.seq}"
                if mine:
                    # Our own commit from a push killed after its commit
                    # point: it becomes the base, whatever the disk holds now.
                    own[ch.path] = ch
                    own_srcs[ch.path] = srcs[ch.path]
                    incoming.pop(ch.path, None)
                else:
                    incoming[ch.path] = Incoming(ch, c.seq, c.peer, c.id)
        for path in rejected:
            s.conflict({"path": path, "reason": "invalid path in a remote record; not applied"})
        # Each fence carries its seq, so recording it before the head moves
        # is harmless: it applies to later commits only.
        self.state.set_fenced(fenced)
        self._apply(s, incoming, own, commits[-1].seq if commits else start, srcs, own_srcs)
        # After the head moved: a kill in between leaves a tip whose seq is
        # not the head, which counts as unknown and is read again.
        self.state.set_tip(self.state.head, *tip)
        self.state.saw(max(listed))
        self._current = (self.state.head, listed_at)

    def _apply(self, s: Session, incoming: dict[str, Incoming], own: dict[str, Change], last: int,
               srcs: dict[str, str], own_srcs: dict[str, str]) -> None:
        lazy = self.hydration == "lazy"
        # Contents the records carried inline: in hand, so never fetched,
        # and written at once even by a lazily hydrated cache.
        inline = {inc.change.sha256: inc.change.inline for inc in incoming.values()
                  if inc.change.inline is not None}
        self.tree.forget_dirs()
        intents = self.state.intents()
        fetches: dict[str, list[str]] = {}
        removes: list[str] = []
        conflicted: list[tuple[str, Base | None, FileState | None, Incoming]] = []
        unhydrated: set[str] = set()
        new_base: dict[str, Change] = dict(own)
        bases = self.state.bases(rel for rel in incoming if rel not in own)
        # copies of other peers' work, from attaching again (origin.py): the remote's replaces them
        copies = self.state.copies(incoming)
        #: what each path held on disk when we decided to replace it
        expect: dict[str, str | None] = {}
        for rel in sorted(incoming):
            inc = incoming[rel]
            theirs = inc.change
            new_base[rel] = theirs
            base = _own_base(own[rel], own_srcs[rel]) if rel in own else bases.get(rel)
            local, virtual = self._local_view(rel, base)
            expect[rel] = None if virtual else _sha(local)
            if _sha(local) == _sha(theirs):
                if virtual:
                    unhydrated.add(rel)
            elif (_sha(local) == _sha(base) or _sha(local) in intents.get(rel, ())
                  or (local is not None and copies.get(rel) == _sha(local))):
                if theirs.op == "delete":
                    removes.append(rel)
                elif lazy and self.rules.is_lazy(rel) and theirs.inline is None:
                    unhydrated.add(rel)
                    removes.append(rel)  # never leave the old content readable
                else:
                    fetches.setdefault(theirs.sha256, []).append(rel)
            else:
                conflicted.append((rel, base, local, inc))
        # Before the first byte hits the disk: say what we are about to write.
        self.state.add_intents([(rel, sha) for sha, rels in fetches.items() for rel in rels]
                               + [(rel, None) for rel in removes]
                               + [(rel, inc.change.sha256) for rel, _b, _l, inc in conflicted])

        # The pool downloads each blob and writes its files atomically, each
        # fsynced; their directories are fsynced once each, at the end,
        # before the state claims the files.
        batch = DurableBatch()
        sizes = {inc.change.sha256: inc.change.size for inc in incoming.values() if inc.change.op == "put"}
        progress = Progress(self.on_progress, "download", sum(map(len, fetches.values())),
                            sum(sizes[sha] * len(rels) for sha, rels in fetches.items()))

        # Another process on this cache may write a path after we decided to
        # replace it: each path is checked again (stat, and hash if need be)
        # right before its rename or delete; one that changed is left as it
        # is and resolved below as a conflict, never overwritten.
        raced: list[str] = []

        def recheck(rel: str) -> None:
            if _sha(self.tree.current(rel)) != expect[rel]:
                raise _LocalChanged(rel)

        def write_all(sha: str, data: bytes, rels: list[str], first: bool = False) -> list[str]:
            blocked = []
            for rel in rels:
                try:
                    st = self.tree.write(rel, data, batch, lambda rel=rel: recheck(rel))
                except BlockedPath:
                    blocked.append(rel)
                except _LocalChanged:
                    raced.append(rel)
                else:
                    self.tree.remember(rel, st, sha)
                    s.add(filesPulled=1)
                if first:
                    progress.advance(1, sizes[sha])
            return blocked

        def fetch_and_write(item: tuple[str, list[str]]) -> tuple[str, bytes | None, list[str]]:
            sha, rels = item
            data = inline.get(sha)
            if data is None and self._streamed(sizes[sha]):
                # Large: streamed into place, never whole in memory.
                placed, blocked = self._place_checked(s, sha, sizes[sha], rels, batch, recheck, raced)
                for rel, st in placed:
                    self.tree.remember(rel, st, sha)
                    s.add(filesPulled=1)
                progress.advance(len(rels), sizes[sha] * len(rels))
                return sha, None, blocked
            if data is None:
                data = fetch_blob(s, self.layout, sha)
            else:
                s.add(bytesPulled=len(data))
            blocked = write_all(sha, data, rels, first=True)
            return sha, data if blocked else b"", blocked

        retry = [r for r in self._pool.map(fetch_and_write, fetches.items()) if r[2]]
        for rel in removes:
            try:
                recheck(rel)
            except _LocalChanged:
                raced.append(rel)
                continue
            if self.tree.abspath(rel).is_file():
                s.add(filesDeleted=1)
            self.tree.remove(rel, batch)
        # A file that a directory stood in the way of is written again once
        # this pull's deletes are done: they may have emptied it (a directory
        # replaced by a file elsewhere). One still in the way (a local
        # directory with files of ours, or a local file where its directory
        # must be) is committed but not here: its base is recorded as not
        # fetched, so it is neither received nor a local delete, a read
        # fetches it once the way is clear, and the conflict is reported.
        for sha, data, rels in retry:
            if data is None:
                placed, still = self._place_checked(s, sha, sizes[sha], rels, batch, recheck, raced)
                for rel, st in placed:
                    self.tree.remember(rel, st, sha)
                    s.add(filesPulled=1)
            else:
                still = write_all(sha, data, rels)
            for rel in still:
                unhydrated.add(rel)
                inc = incoming[rel]
                s.conflict({"path": rel, "class": self.rules.classify(rel).value, "seq": inc.seq, "peer": inc.peer,
                            "theirs": "put", "savedAs": None,
                            "reason": "a local directory or file is in the way; theirs was not written"})
        batch.sync(self._pool.map)
        for rel in sorted(raced):
            unhydrated.discard(rel)
            base = _own_base(own[rel], own_srcs[rel]) if rel in own else bases.get(rel)
            conflicted.append((rel, base, self.tree.current(rel), incoming[rel]))

        def theirs(sha: str) -> bytes:
            data = inline.get(sha)
            return fetch_blob(s, self.layout, sha) if data is None else data

        def place(rel: str, ch: Change, before) -> None:
            if ch.inline is None and self._streamed(ch.size):
                placed, blocked = self._place_blob(s, ch.sha256, ch.size, [rel], None, before)
                if blocked:
                    raise BlockedPath(rel)
                self.tree.remember(rel, placed[0][1], ch.sha256)
            else:
                data = theirs(ch.sha256)
                before()
                self.tree.remember(rel, self.tree.write(rel, data), ch.sha256)

        mine = {rel for rel, _b, _l, _i in conflicted}
        renumber = Renumberer(self.tree, self.state, self.journal, self.rules, incoming,
                              {rel for rel in incoming if rel not in mine}, s.renumber)
        resolver = Resolver(self.tree, self.state, self.journal, self.peer, self.rules, theirs,
                            lambda rel, base: self._content(s, rel, base), place, renumber)
        for rel, base, local, inc in conflicted:
            report = resolver.resolve(rel, base, local, inc)
            if report is not None:
                s.conflict(report)
            if rel in resolver.blocked:
                unhydrated.add(rel)
            elif inc.change.op == "put":
                s.add(filesPulled=1)
            else:
                s.add(filesDeleted=1)

        self.renumbered.update(renumber.changed)
        self._follow_moves(renumber.moves)
        with self.state.transaction():
            self.state.set_bases((rel, ch.sha256, ch.size, rel not in unhydrated, srcs.get(rel, ""))
                                 for rel, ch in new_base.items() if ch.op == "put")
            self.state.drop_bases(rel for rel, ch in new_base.items() if ch.op == "delete")
            self.tree.flush_stats()
            self.state.set_head(last)
            self.state.drop_copies(copies)
            self.state.clear_pending(last)
            self.state.clear_intents()


class _LocalChanged(Exception):
    """A path changed on disk after the pull decided to replace it."""


def _own_base(change: Change, src: str) -> Base | None:
    return None if change.op == "delete" else Base(change.sha256, change.size, True, src)
