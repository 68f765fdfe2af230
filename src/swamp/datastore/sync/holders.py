"""What every lock of swamp shares, whatever holds it (the leases of
lease.py, on an object store or on the filesystem datastore's
``.locks/``): how long a command waits for one, and the rule that a holder
on this machine whose process is gone is stale at once. The protocol owns
it (lease.py and scopes.py apply it); ``swamp.datastore.locks`` hands it
to the datastore and the layers above.

"This machine" is not the host name: two machines, or two containers with
their own PID namespaces, may share one (``hostname:`` in a compose file).
A holder records ``machine``, the boot id of the kernel it runs on and the
inode of its PID namespace; a pid is looked up only in a holder whose
``machine`` equals ours. Anything else (another machine, a record without
the field, a system without ``/proc``: ``unknown``) is judged by its
lease's ttl, as any remote holder is."""

from __future__ import annotations

import os

from swamp.util.ids import hostname

UNKNOWN = "unknown"


def lock_timeout_ms() -> int:
    return int(os.environ.get("SWAMP_LOCK_TIMEOUT_MS", "60000"))


def machine_identity(pid: int) -> str:
    """Where ``pid`` lives: ``<boot id>:<pid namespace inode>`` (the kernel
    this process runs on and the PID namespace the pid belongs to), or
    ``unknown`` when either cannot be read (no ``/proc``; no such pid)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        ns = os.stat(f"/proc/{pid}/ns/pid").st_ino
    except (OSError, ValueError):
        return UNKNOWN
    return f"{boot}:{ns}" if boot else UNKNOWN


def holder_exited(info: dict) -> bool:
    """A holder on this machine (same boot and PID namespace, recorded as
    ``machine``) whose process is gone (killed with SIGKILL, say) will never
    release nor heartbeat: no need to wait out its TTL. A holder elsewhere,
    one recorded without ``machine`` (an older swamp) or one we cannot
    check, counts as alive: its ttl decides."""
    pid = info.get("pid")
    if info.get("host") != hostname() or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 \
            or pid == os.getpid():
        return False
    machine = info.get("machine")
    if not isinstance(machine, str) or machine == UNKNOWN or machine != machine_identity(os.getpid()):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
