"""How what a running server knows of the access documents in the
datastore (``repo/access_docs.py``) stays fresh.

The request path never opens a session: ``SharedDoc``
(app/enforced_access.py) re-reads a document from this checkout's copy when
that file changed (a stat per request). On a shared datastore
``AccessWatch`` pulls every ``REFRESH_S`` seconds, so a
token minted or revoked, or a grant or group changed, on any replica or
peer reaches this one's copy within REFRESH_S plus one pull: the bound
docs/serve.md states (5 s with the default 2 s)."""

from __future__ import annotations

import os

from swamp.errors import SwampError
from swamp.serve.background import Watch, log as _log

#: how often a replica pulls the access documents of a shared datastore
REFRESH_S = float(os.environ.get("SWAMP_SERVE_ACCESS_REFRESH_S", "2"))


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
