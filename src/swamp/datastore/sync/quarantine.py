"""Taking back what was written under a lost lease (SYNC.md "Leases"):
never published, kept aside locally in ``.sync/lost-lease/``, each path
restored to its base. Called by the fencing (fencing.py) under the cache's
lock; idempotent."""

from __future__ import annotations

import contextlib
import re

from swamp.datastore.objectstore.base import ObjectStoreError
from swamp.util import clock

from .changes import LocalChanges
from .contents import committed_content
from .counting import Session
from .engine_state import EngineState
from .errors import CorruptRemoteError
from .lease_scope import LeaseScope
from .localtree import BlockedPath
from .transfers import Transfers


def _log():
    import logging  # here: a sync that goes well logs nothing (logging costs a command ~2 ms)

    return logging.getLogger(__name__)


class TakeBack:
    def __init__(self, ctx: EngineState, changes: LocalChanges, transfers: Transfers) -> None:
        self.ctx, self.changes, self.transfers = ctx, changes, transfers

    def take_back(self, s: Session, name: str, nonce: str, written: set[str], scope: LeaseScope) -> bool:
        """For the holding ``nonce`` of lease ``name``, which wrote
        ``written``: each of its paths that differs from its base is moved
        (bytes intact) to ``.sync/lost-lease/<time>-<lease>-<nonce>/<path>``,
        local only, and the path is restored to its base: removed if it had
        none, fetched again if it had one (left "not fetched" if the store
        cannot be reached: a read or a pull fetches it later). Each path then
        equals its base, so no push publishes it, whatever the journal still
        lists. ``scope.aside`` is set to where it kept them. True if it took
        anything back."""
        if not written:
            return False
        changes = self.changes.of(written)
        if not changes:
            return False
        if scope.aside is None:
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]
            stamp = clock.isoformat().replace(":", "").replace("+0000", "Z")
            # ends with the holding's nonce: any process finds it (Fencing.aside_of)
            scope.aside = f".sync/lost-lease/{stamp}-{slug}-{nonce[:12]}"
        bases = self.ctx.state.bases(ch.path for ch in changes)
        for ch in changes:
            if ch.op == "put":
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    self.ctx.tree.move_out(ch.path, f"{scope.aside}/{ch.path}")
        unfetched = []
        for ch in changes:
            base = bases.get(ch.path)
            if base is None:
                continue
            if self.ctx.hydration == "lazy" and self.ctx.rules.is_lazy(ch.path):
                unfetched.append(ch.path)
                continue
            try:
                if not base.src and self.ctx.streamed(base.size):
                    # a large blob: streamed into place, never whole in memory
                    placed, blocked = self.transfers.place_blob(s, base.sha256, base.size, [ch.path], None)
                    if blocked:
                        raise BlockedPath(ch.path)
                    st = placed[0][1]
                else:
                    st = self.ctx.tree.write(ch.path, committed_content(s, self.ctx.layout, ch.path, base))
            except (ObjectStoreError, CorruptRemoteError, BlockedPath) as e:
                _log().warning("could not restore %s after losing lease %r (%s); it is fetched on first read",
                               ch.path, name, e)
                unfetched.append(ch.path)
            else:
                self.ctx.tree.remember(ch.path, st, base.sha256)
        with self.ctx.state.transaction():
            self.ctx.state.set_bases((rel, bases[rel].sha256, bases[rel].size, False, bases[rel].src)
                                     for rel in unfetched)
            self.ctx.tree.flush_stats()
        _log().warning("lease %r was lost: %d change(s) made under it were not published; kept in %s",
                       name, len(changes), scope.aside)
        return True


