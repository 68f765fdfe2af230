"""What happens to a path that changed both locally and in a commit we pull
(SYNC.md "Conflicts"). Never last-writer-wins:

- mergeable documents: three-way merge per key; a clean merge is written
  locally and journaled so the next push publishes it;
- everything else, and a merge that fails: theirs goes in place, ours is
  renamed to ``<path>.conflict-<peer>-<seq>-<id>`` (local-only, never
  pushed; ``<id>`` from the incoming commit's id, so a name never repeats) and
  the path is reported. Immutable paths land here too: the second publisher
  of a version is refused and nothing is overwritten;
- except a numbered version of ours that was never published (our push
  failed and a peer published that number meanwhile): it moves to the next
  free number (renumber.py) and no conflict is left.
"""

from __future__ import annotations

from typing import Callable

from swamp.errors import CorruptRemoteError
from swamp.util.plain import Frozen

from .blobs import sha256_bytes
from .commitlog import Change
from .journal import Journal
from .localtree import BlockedPath, FileState, LocalTree
from .merge import MergeConflict, NotMergeable, merge_document
from .localonly import conflict_copy_name
from .renumber import Renumberer
from .rules import PathClass, PathRules
from .state import Base, SyncState


class Incoming(Frozen):
    """The net change a pull brings to one path, and the commit it came from."""

    __slots__ = ("change", "seq", "peer", "commit")
    change: Change
    seq: int
    peer: str
    #: the id of that commit (of the checkpoint's commit), "" if unknown
    commit: str

    def __init__(self, change: Change, seq: int, peer: str, commit: str = "") -> None:
        _set = object.__setattr__
        _set(self, "change", change)
        _set(self, "seq", seq)
        _set(self, "peer", peer)
        _set(self, "commit", commit)


class Resolver:
    def __init__(self, tree: LocalTree, state: SyncState, journal: Journal, peer: str, rules: PathRules,
                 fetch: Callable[[str], bytes], fetch_base: Callable[[str, Base], bytes],
                 place: Callable[[str, Change, Callable[[], None]], None] | None = None,
                 renumber: Renumberer | None = None) -> None:
        """``fetch(sha)``: an incoming content; ``fetch_base(path, base)``:
        the committed content a base names (a blob, or inline in a record);
        ``place(path, change, before)``: write an incoming content at
        ``path`` (and remember it), streaming a large one, calling
        ``before()`` once the content is in hand and before it replaces
        the path; by default through ``fetch``. Only a merge holds an
        incoming content in memory."""
        self.tree = tree
        self.state = state
        self.journal = journal
        self.peer = peer
        self.rules = rules
        self.fetch = fetch
        self.fetch_base = fetch_base
        self.place = place or self._place
        #: moves a version of ours that a peer's version of the same number beat
        self.renumber = renumber
        #: paths whose incoming file could not be written (something local in the way)
        self.blocked: set[str] = set()

    def resolve(self, rel: str, base: Base | None, local: FileState | None, inc: Incoming) -> dict | None:
        """Leave the disk holding the outcome; return the report entry, or
        None when a merge settled it."""
        cls = self.rules.classify(rel)
        theirs_change = inc.change
        if cls is PathClass.IMMUTABLE and self.renumber is not None:
            # A version of ours never published, whose number a peer
            # published first (even if it deleted it since: the number is
            # still taken): ours moves to the next free number, theirs goes
            # in place, and nothing is left as a conflict copy.
            moved = self.renumber.renumbered(rel)
            if moved is None and local is not None and base is None:
                moved = self.renumber.renumber(rel)
            if moved is not None:
                try:
                    if theirs_change.op == "put":
                        self.place(rel, theirs_change, lambda: None)
                except BlockedPath:
                    self.blocked.add(rel)
                return None
        report: dict = {"path": rel, "class": cls.value, "seq": inc.seq, "peer": inc.peer,
                        "ours": "delete" if local is None else "put", "theirs": theirs_change.op}
        fmt = self.rules.mergeable_format(rel) if cls is PathClass.MERGEABLE else None
        theirs = (self.fetch(theirs_change.sha256)
                  if fmt and local is not None and theirs_change.op == "put" else None)
        base_bytes: bytes | None = None
        if fmt and local is not None and theirs is not None and base is not None:
            try:
                base_bytes = self.fetch_base(rel, base)
            except CorruptRemoteError:
                # The base is no longer stored (gc swept or trimmed it): a
                # merge without it could drop a delete, so keep both.
                fmt = None
                report["reason"] = "the merge base is no longer stored remotely; both versions kept"
        if fmt and local is not None and theirs is not None:
            try:
                merged = merge_document(fmt, base_bytes, self.tree.read(rel)[0], theirs)
            except MergeConflict as e:
                report["keys"] = e.keys
                report["reason"] = "the same key changed on both sides"
            except NotMergeable as e:
                report["reason"] = f"not a mergeable map ({e})"
            else:
                self._write(rel, merged)
                if merged != theirs:
                    self.journal.append(rel)  # our side of the merge still has to be pushed
                return None
        elif "reason" not in report:
            report["reason"] = ("immutable path published by another peer; yours was not published"
                                if cls is PathClass.IMMUTABLE else "changed locally and by another peer")
        report["savedAs"] = None

        def aside() -> None:
            # Ours is moved aside only once theirs is in hand (a failed
            # download leaves the path as it was, for the next pull).
            if local is not None and report["savedAs"] is None:
                saved = conflict_copy_name(rel, self.peer, inc.seq, inc.commit)
                while self.tree.abspath(saved).exists() or self.tree.abspath(saved).is_symlink():
                    # the same commit pulled again (a remote restored from a
                    # copy): never over an earlier copy
                    saved = conflict_copy_name(rel, self.peer, inc.seq, "")
                self.tree.move_aside(rel, saved)
                self.state.add_conflict(saved, rel, inc.seq)
                report["savedAs"] = saved

        if theirs_change.op == "put":
            try:
                if theirs is not None:
                    aside()
                    self._write(rel, theirs)
                else:
                    self.place(rel, theirs_change, aside)
            except BlockedPath as e:
                self.blocked.add(rel)
                report["reason"] += f"; theirs could not be written ({e})"
        aside()
        return report

    def _place(self, rel: str, ch: Change, before: Callable[[], None]) -> None:
        data = self.fetch(ch.sha256)
        before()
        self._write(rel, data)

    def _write(self, rel: str, data: bytes) -> None:
        st = self.tree.write(rel, data)
        self.tree.remember(rel, st, sha256_bytes(data))
