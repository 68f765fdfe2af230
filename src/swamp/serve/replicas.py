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

from swamp.errors import SwampError
from swamp.serve.background import Watch, log as _log

#: how often a replica looks for its peers' interrupted runs
EVERY_S = float(os.environ.get("SWAMP_SERVE_REAP_S", "5"))


class ReplicaWatch(Watch):
    thread_name = "swamp-replica-watch"

    def __init__(self, state, *, every_s: float = EVERY_S) -> None:
        from swamp.util.ids import hostname

        super().__init__(state, every_s=every_s)
        self.replica = f"{hostname()}:{os.getpid()}"

    def loop(self) -> None:
        from swamp.app import interrupted_runs

        try:
            with interrupted_runs.heartbeat(self.state.repo, self.replica):
                for _ in self.ticks():
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
