"""Each replica's heartbeat, and its watch over its peers' runs.

While it serves, a replica holds a lease of its own,
``serve-replica/<host>:<pid>`` (``app.interrupted_runs.heartbeat``), which
heartbeats in the datastore like every lease. Every ``every_s`` seconds it
looks for runs recorded running whose run lease went stale
(``app.interrupted_runs.find_orphaned_runs``): a replica killed mid-run
(SIGKILL, a lost machine) leaves its runs' leases without heartbeat, and
the first peer to see one stale records the run as interrupted, with the
reason. Schedules go on: a tick is claimed by whichever replica is alive."""

from __future__ import annotations

import os
import sys
import threading

from swamp.errors import SwampError

#: how often a replica looks for its peers' interrupted runs
EVERY_S = float(os.environ.get("SWAMP_SERVE_REAP_S", "5"))


class ReplicaWatch:
    def __init__(self, state, *, every_s: float = EVERY_S) -> None:
        from swamp.util.ids import hostname

        self.state = state
        self.every_s = every_s
        self.replica = f"{hostname()}:{os.getpid()}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="swamp-replica-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)

    def _loop(self) -> None:
        from swamp.app import interrupted_runs

        try:
            with interrupted_runs.heartbeat(self.state.repo, self.replica):
                while not self._stop.wait(self.every_s):
                    if self.state.shutting_down:
                        return
                    self.look()
        except SwampError as e:
            _log(f"replica heartbeat stopped: {e.message}")

    def look(self) -> None:
        from swamp.app import interrupted_runs

        try:
            for row in interrupted_runs.reap(self.state.repo):
                _log(f"run {row['runId']} of {row['workflowName']} recorded as interrupted ({row['reason']})")
        except SwampError as e:
            _log(f"could not look for interrupted runs: {e.message}")
        except Exception:  # a bug here must not stop the heartbeat
            import traceback

            traceback.print_exc()


def _log(text: str) -> None:
    print(f"swamp serve: {text}", file=sys.stderr, flush=True)
