"""Local changes against the bases (SYNC.md "Push"): which paths to look
at (journal, or a full walk) and what changed there, a pure function of
disk and base. Used by push, by the lease checks (what a lost holding
wrote that still differs) and by publishing (the new versions a push
would publish)."""

from __future__ import annotations

from typing import Iterable

from swamp.errors import ValidationError
from swamp.util.names import check_rel_path

from .commitlog import Change
from .compare import content_id as _sha
from .compare import parents as _parents
from .engine_state import EngineState
from .localonly import is_synced
from .localtree import FileState


def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class LocalChanges:
    def __init__(self, ctx: EngineState) -> None:
        self.ctx = ctx

    def candidates(self, paths: Iterable[str], full: bool) -> set[str]:
        """The paths to look at: those journaled, what is under them (locally
        or committed), and their committed parents (a file that a directory
        replaced)."""
        tree, state = self.ctx.tree, self.ctx.state
        if full:
            return set(tree.walk()) | state.all_bases().keys()
        out: set[str] = set()
        for p in paths:
            out.add(p)
            out.update(tree.files_under(p))
            out.update(state.base_paths_under(p))
        out.update(state.bases({a for p in out for a in _parents(p)}))
        return out

    def diff(self, cands: Iterable[str]) -> list[Change]:
        """Local changes against the bases. A file whose size differs from
        its base has changed whatever its hash: its sha256 is left to the
        upload, which reads it anyway."""
        tree, state = self.ctx.tree, self.ctx.state
        changes = []
        intents = state.intents()
        cands = sorted(cands)
        bases = state.bases(cands)
        for rel in cands:
            try:
                check_rel_path(rel)
            except ValidationError:
                _log().warning("not syncing %r: not a valid datastore path", rel)
                continue
            if not is_synced(rel):
                continue
            base = bases.get(rel)
            st = tree.stat(rel)
            if rel in intents and _sha(tree.current(rel, st)) in intents[rel]:
                continue  # left by an interrupted pull: the next pull settles it
            if st is None:
                if base is not None and base.hydrated:
                    changes.append(Change(rel, "delete"))
            elif base is None or st.st_size != base.size:
                changes.append(Change(rel, "put", None, st.st_size))
            else:
                cur = tree.current(rel, st)
                if isinstance(cur, FileState) and cur.sha256 != base.sha256:
                    changes.append(Change(rel, "put", cur.sha256, cur.size))
        tree.flush_stats()
        return changes

    def of(self, paths: set[str]) -> list[Change]:
        """The changes under ``paths`` as a scope records them ("" for
        everything)."""
        return self.diff(self.candidates(paths - {""}, "" in paths))
