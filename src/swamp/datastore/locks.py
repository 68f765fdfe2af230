"""What every lock of swamp shares, whatever holds it (the leases of
sync/lease.py, on an object store or on the filesystem datastore's
``.locks/``): how long a command waits for one, and the rule that a holder
on this machine whose process is gone is stale at once."""

from __future__ import annotations

import os

from swamp.util.ids import hostname


def lock_timeout_ms() -> int:
    return int(os.environ.get("SWAMP_LOCK_TIMEOUT_MS", "60000"))


def holder_exited(info: dict) -> bool:
    """A holder on this host whose process is gone (killed with SIGKILL, say)
    will never release nor heartbeat: no need to wait out its TTL. A holder
    elsewhere, or one we cannot check, counts as alive."""
    pid = info.get("pid")
    if info.get("host") != hostname() or not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
