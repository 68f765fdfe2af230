"""What a running server knows of the access documents in the datastore
(``repo/access_docs.py``), and how it stays fresh.

The request path never opens a session: ``SharedDoc`` re-reads a document
from this checkout's copy when that file changed (a stat per request). On
a shared datastore ``AccessWatch`` pulls every ``REFRESH_S`` seconds, so a
token minted or revoked, or a grant or group changed, on any replica or
peer reaches this one's copy within REFRESH_S plus one pull: the bound
docs/serve.md states (5 s with the default 2 s)."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from swamp.errors import SwampError
from swamp.serve.background import Watch, log as _log

if TYPE_CHECKING:
    from swamp.app.repository import Repo

#: how often a replica pulls the access documents of a shared datastore
REFRESH_S = float(os.environ.get("SWAMP_SERVE_ACCESS_REFRESH_S", "2"))


class SharedDoc:
    """One access document's map, read again when its file changed. On the
    request path: two stats of paths worked out once."""

    def __init__(self, repo: Repo, kind: str) -> None:
        self.repo = repo
        self.kind = kind
        self._stamp: tuple | None = ("never",)
        self._entries: dict = {}
        self._file: str | None = None  # the datastore opens lazily: its paths on first use
        self._dir = ""

    def current(self) -> dict:
        from swamp.app.access import check_private, document_file, read_cached

        if self._file is None:
            path = document_file(self.repo, self.kind)
            self._file, self._dir = str(path), str(path.parent)
        try:
            st = os.stat(self._file)
        except (FileNotFoundError, NotADirectoryError):
            stamp = None
        else:
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            # every time: a mode changed later does not change the stamp
            if st.st_mode & stat.S_IWOTH or os.stat(self._dir).st_mode & stat.S_IWOTH:
                from pathlib import Path

                check_private(Path(self._file))
        if stamp != self._stamp:
            # A stamp of None (no file yet) may still hydrate a lazily pulled document.
            self._entries = read_cached(self.repo, self.kind)
            self._stamp = stamp
        return self._entries

    def forget(self) -> None:
        """Read it again at the next ``current`` (``access reload``)."""
        self._stamp = ("never",)


class AccessWatch(Watch):
    """Pulls a shared datastore now and then, so that the access documents
    of this checkout follow the other replicas' changes."""

    thread_name = "swamp-access-watch"

    def __init__(self, state, *, every_s: float = REFRESH_S) -> None:
        super().__init__(state, every_s=every_s)

    def start(self) -> None:
        from swamp.app.lifecycle import is_shared

        if is_shared(self.state.repo):  # a directory datastore is this checkout's own: nothing to pull
            super().start()

    def loop(self) -> None:
        from swamp.app.lifecycle import refresh

        for _ in self.ticks():
            if self.state.shutting_down:
                return
            try:
                refresh(self.state.repo)
            except SwampError as e:
                _log(f"could not pull the access documents: {e.message}")
            except Exception:  # a bug here must not stop the watch
                import traceback

                traceback.print_exc()
