"""Writing the checkpoint of a commit that lands on a multiple of K
(``checkpoint_every``): the whole tree at that commit, with the contents
committed inline carried inline (checkpoint.py), within a bound, so a
newcomer reads it in one GET."""

from __future__ import annotations

from swamp.datastore.objectstore.base import ObjectStoreError
from swamp.errors import SwampError

from . import checkpoint
from .blobs import upload_blob
from .commitlog import Commit
from .contents import committed_content
from .counting import Session
from .engine_state import EngineState
from .errors import CorruptRemoteError
from .gc import protect

#: inline contents one checkpoint carries, at most (a newcomer reads it in
#: one GET, and holds it in memory); past it, the writer stores blobs
CHECKPOINT_INLINE_TOTAL = 32 << 20


def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class CheckpointWriter:
    def __init__(self, ctx: EngineState) -> None:
        self.ctx = ctx

    def after(self, s: Session, commit: Commit) -> None:
        """Write the checkpoint at ``commit`` if its seq is a multiple of K.
        A failure only costs newcomers a longer replay; the next mark retries."""
        if commit.seq % self.ctx.checkpoint_every:
            return
        try:
            tree, stored = self.tree_at(s, commit)
            checkpoint.write(s, self.ctx.layout, commit.seq, tree, commit.id, self.ctx.state.fenced())
            self.ctx.state.mark_blobs_stored(stored)
        except (ObjectStoreError, CorruptRemoteError, SwampError) as e:
            _log().warning("could not write checkpoint %d: %s", commit.seq, e)

    def tree_at(self, s: Session, commit: Commit) -> tuple[checkpoint.Tree, list[tuple[str, str]]]:
        """The tree at ``commit``, with the contents committed inline carried
        inline: from this commit, else from the local file when it still
        holds them, else from the record that has them. Past
        CHECKPOINT_INLINE_TOTAL, the rest are stored as blobs first (and
        returned, (path, sha256), to be recorded as such once the
        checkpoint is written), so a checkpoint stays one bounded GET."""
        in_hand = {ch.path: ch.inline for ch in commit.changes if ch.inline is not None}
        tree: checkpoint.Tree = {}
        room = CHECKPOINT_INLINE_TOTAL
        spill: dict[str, bytes] = {}
        stored: list[tuple[str, str]] = []
        for path, b in sorted(self.ctx.state.all_bases().items()):
            data = None
            if b.src:
                data = in_hand.get(path)
                if data is None:
                    try:
                        data, sha = self.ctx.tree.read(path)
                    except OSError:
                        sha = None
                    if sha != b.sha256:
                        data = committed_content(s, self.ctx.layout, path, b)
                if len(data) > room:
                    spill[b.sha256] = data
                    stored.append((path, b.sha256))
                    data = None
                else:
                    room -= len(data)
            tree[path] = (b.sha256, b.size, data)
        if spill:
            self._store_blobs(s, spill)
        return tree, stored

    def _store_blobs(self, s: Session, contents: dict[str, bytes]) -> None:
        """Create these blobs (sha256 -> bytes); those found stored already
        are protected from a concurrent gc, and stored again if one swept
        them meanwhile."""
        layout, pool = self.ctx.layout, self.ctx.pool
        fresh = list(pool.map(lambda item: upload_blob(s, layout, *item), contents.items()))
        found = {sha for sha, new in zip(contents, fresh) if not new}
        for sha in protect(s, layout, found, pool):
            upload_blob(s, layout, sha, contents[sha])
