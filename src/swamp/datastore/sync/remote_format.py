"""The remote's sync format (``format.json``): checked, or written
create-only; remembered in the state, since it decides whether contents
may travel inline in commit records (INLINE_FORMAT). A remote written by a
newer protocol is refused."""

from __future__ import annotations

import json

from swamp.datastore.objectstore.base import ObjectNotFound, ObjectStore, PreconditionFailed
from swamp.errors import SwampError
from swamp.util import clock

from .counting import Session
from .engine_state import EngineState
from .errors import CorruptRemoteError
from .layout import FORMAT_VERSION, INLINE_FORMAT


class RemoteFormat:
    def __init__(self, ctx: EngineState) -> None:
        self.ctx = ctx

    def ensure(self, store: ObjectStore, *, create: bool) -> None:
        """Check (or, with ``create``, write) ``format.json``; remembers the
        remote's format, which decides whether contents may go inline."""
        key, state = self.ctx.layout.format_key, self.ctx.state
        try:
            if create:
                store.put(key, format_body(), if_none_match=True)
                state.set_meta("format", str(FORMAT_VERSION))
                return
            data, _ = store.get(key)
        except PreconditionFailed:
            data, _ = store.get(key)
        except ObjectNotFound:
            return  # a log without format.json was written by a first push racing setup
        state.set_meta("format", str(self.version_of(data)))

    def version_of(self, data: bytes) -> int:
        """The version ``format.json`` names; one newer than this swamp's is refused."""
        try:
            version = int(json.loads(data)["version"])
        except (ValueError, KeyError, TypeError):
            raise CorruptRemoteError(f"{self.ctx.layout.format_key} is malformed") from None
        if version > FORMAT_VERSION:
            raise SwampError(
                f"the remote datastore uses sync format {version}; this swamp understands {FORMAT_VERSION}",
                hint="upgrade swamp", code="format_too_new")
        return version

    def known(self) -> int:
        """The remote's format as this cache last saw it (0: not known)."""
        return int(self.ctx.state.get_meta("format") or 0)

    def saw_upgrade(self, version: int) -> None:
        """The remote is of format ``version`` at least (never lowered)."""
        if version > self.known():
            self.ctx.state.set_meta("format", str(version))

    def inline_limit(self, s: Session) -> int:
        """The largest content this remote's readers take inline (0: none);
        its format is read once, then remembered."""
        if self.ctx.inline_max <= 0:
            return 0
        if self.ctx.state.get_meta("format") is None:
            self.ensure(s, create=False)
        return self.ctx.inline_max if self.known() >= INLINE_FORMAT else 0


def format_body() -> bytes:
    return json.dumps({"format": "swamp-sync", "version": FORMAT_VERSION, "createdAt": clock.isoformat()}).encode()
