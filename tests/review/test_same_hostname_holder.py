"""Review (round after e212c4b): a LIVE run must never be marked
interrupted (app/interrupted_runs.py); it relies on the lease's staleness.

Hole (in the lease rule interrupted runs now lean on, not new this round):
"a lease whose holder ran on this machine (same host name) in a process
that no longer exists is stale at once" (datastore/locks.holder_exited)
takes the host NAME for the machine. Two machines (or containers with
their own PID namespaces: `hostname:` set in a compose file, host
networking) with one host name each see the other's live, heartbeating
holder as a dead process of their own and take its lease over at once: a
replica's reaper then records the other replica's running run as
interrupted, and every model lease between them is broken on contact."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.errors import LockTimeoutError
from swamp.repo.datastores import path_rules

LEASE = "workflow-run/0c7a5e1e-4d3b-4f8e-9a55-1b2c3d4e5f60"


class _OtherPidNamespace:
    """``os`` as the holder's machine sees it: same host name, its own pids."""

    def __init__(self, pid: int) -> None:
        self._pid = pid

    def getpid(self) -> int:
        return self._pid

    def __getattr__(self, name):
        return getattr(os, name)


def test_a_heartbeating_holder_elsewhere_with_our_host_name_keeps_its_lease(tmp_path, monkeypatch):
    from swamp.datastore.sync import lease as lease_module

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid_there = int(gone.stdout)  # a pid no process here has (it exited)
    store = MemoryObjectStore()
    there = SyncEngine(store, tmp_path / "there", rules=path_rules(), peer="there", concurrency=2)
    here = SyncEngine(store, tmp_path / "here", rules=path_rules(), peer="here", concurrency=2)
    try:
        # every lease body written here names pid_there (locks.holder_exited reads the real os)
        monkeypatch.setattr(lease_module, "os", _OtherPidNamespace(pid_there))
        with there.lease(LEASE):  # alive: it heartbeats every third of its ttl
            with pytest.raises(LockTimeoutError):
                with here.lease(LEASE, timeout_ms=1000):
                    pass
    finally:
        here.close()
        there.close()
