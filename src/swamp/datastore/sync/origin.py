"""Whose work a file is, for attaching again to a rewound remote (SYNC.md
"The re-attach rule").

A bucket restored from an older copy lost what was published after that
copy. Every peer that attaches again (``datastore setup``, as the
``remote_changed`` hint says) holds some of it: its own work, and copies of
other peers' work that it pulled. If each republished all it holds, k
peers would publish k copies, each renumbered above the last, and a peer's
copy that the author's republished version overtakes would be a conflict.
So a peer republishes only its own work:

- **own**: every content this cache's pushes sent as its own change is
  recorded (``own`` in state.db, written before the commit's create, so a
  push killed after its commit point still counts);
- on attaching again, before the old state is forgotten, every file that
  still equals its old base (published on the old chain) and is not this
  cache's own content is a **copy**; the copies are recorded in the same
  transaction as the forgetting (``copy``), so a setup killed half-way and
  run again decides the same way;
- the pull that follows takes a copy for the remote's: theirs replaces it
  without a conflict and without renumbering (it is not ours to move), and
  one the remote holds as it is simply becomes its base;
- a copy the remote does not hold (its author has not attached again yet)
  is set aside, bytes intact, under ``.sync/rewound/<time>/`` (local
  only), so the tree is the remote's plus this peer's own work and no
  number is allocated above another peer's lost version; no push ever
  publishes a recorded copy.

A state from before ``own`` was recorded cannot tell its own from copies:
it republishes everything, as before. A collaborator of ``SyncEngine``."""

from __future__ import annotations

from swamp.util import clock

from . import identity
from .engine_state import EngineState
from .localonly import is_synced
from .renumber import _Files


class Origin:
    def __init__(self, ctx: EngineState) -> None:
        self.ctx = ctx

    def attach_remote(self) -> bool:
        """``identity.attach``, recording first which files are copies of
        other peers' work (see above). True if the old state was forgotten."""
        with self.ctx.exclusive():
            return identity.attach(self.ctx.state, self.ctx.store, self.ctx.layout, copies=self._foreign_copies)

    def _foreign_copies(self) -> list[tuple[str, str]]:
        """(path, sha256) of the files that equal their base and are not
        this cache's own content; none when the state cannot tell."""
        if not self.ctx.state.knows_authorship:
            return []
        own = self.ctx.state.own()
        out = []
        for rel, base in sorted(self.ctx.state.all_bases().items()):
            if own.get(rel) == base.sha256 or not is_synced(rel):
                continue
            cur = self.ctx.tree.current(rel)
            if cur is not None and cur.sha256 == base.sha256:
                out.append((rel, base.sha256))
        self.ctx.tree.flush_stats()
        return out

    def set_aside_copies(self) -> dict:
        """After the pull that follows attaching again: the copies the
        remote does not hold go to ``.sync/rewound/<time>/`` (local only).
        ``{"copiesSetAside": n, "copiesDir": folder or None, "closedGaps":
        [{"versions", "from", "to"}]}`` (see ``_close_gap``)."""
        with self.ctx.exclusive():
            copies = self.ctx.state.copies()
            if not copies:
                return {"copiesSetAside": 0, "copiesDir": None, "closedGaps": []}
            bases = self.ctx.state.bases(copies)
            stamp = clock.isoformat().replace(":", "").replace("+0000", "Z")
            aside = f".sync/rewound/{stamp}"
            moved = 0
            emptied: dict[str, object] = {}  # version directories a copy left: versions -> scheme
            for rel, sha in sorted(copies.items()):
                if rel in bases:
                    continue  # the remote holds it: its base now
                cur = self.ctx.tree.current(rel)
                if cur is not None and cur.sha256 == sha:
                    self.ctx.tree.move_out(rel, f"{aside}/{rel}")
                    moved += 1
                    scheme = self.ctx.rules.version_scheme(rel)
                    if scheme is not None:
                        emptied[scheme.split(rel)[0]] = scheme
                # (changed since: that is this peer's own change now, published as such)
            self.ctx.tree.flush_stats()
            self.ctx.state.drop_copies(copies)
            closed = [m for versions, scheme in sorted(emptied.items()) for m in self._close_gap(scheme, versions)]
            return {"copiesSetAside": moved, "copiesDir": aside if moved else None, "closedGaps": closed}

    def _close_gap(self, scheme, versions: str) -> list[dict]:
        """Our own unpublished versions of ``versions`` that were numbered
        above copies now set aside move down to follow the versions this
        cache still knows (committed, or on disk), so no number is skipped:
        a run made on top of another peer's lost versions takes the next
        number after what the remote holds. Lowest first, each to a free
        number; what names the version follows (the scheme's rewrite)."""
        root = self.ctx.tree.abspath(versions)
        if not root.is_dir():
            return []
        prefix = versions + "/"
        under = self.ctx.state.base_paths_under(versions)
        committed = {int(h) for h in (p[len(prefix):].split("/", 1)[0] for p in under)
                     if h.isdigit()}
        ours, others = [], set(committed)
        for d in root.iterdir():
            if not d.name.isdigit():
                continue
            v = int(d.name)
            held = [p for p in self.ctx.tree.files_under(f"{versions}/{v}") if is_synced(p)]
            if v in committed or not held or self.ctx.state.bases(held) or self.ctx.state.copies(held):
                others.add(v)
            else:
                ours.append((v, held))
        top = max(others, default=0)
        out = []
        files = _Files(self.ctx.tree)
        for i, (v, held) in enumerate(sorted(x for x in ours if x[0] > top)):
            new = top + 1 + i
            if new == v:
                continue
            for p in held:
                to = f"{versions}/{new}/{p[len(versions) + len(str(v)) + 2:]}"
                self.ctx.tree.move_out(p, to)
                self.ctx.journal.append(to)
            for p in scheme.rewrite(files, versions, v, new):
                self.ctx.journal.append(p)
            out.append({"versions": versions, "from": v, "to": new})
        return out

    def copy_held_back(self, changes) -> set[str]:
        """The paths of ``changes`` that are recorded copies, still as they
        were: never published by this peer."""
        copies = self.ctx.state.copies(ch.path for ch in changes if ch.op == "put")
        if not copies:
            return set()
        out = set()
        for ch in changes:
            sha = copies.get(ch.path)
            if sha is not None:
                cur = ch.sha256 or getattr(self.ctx.tree.current(ch.path), "sha256", None)
                if cur == sha:
                    out.add(ch.path)
        return out
