"""The lock rules of swamp for the datastore and the layers above it (the
filesystem datastore's ``.locks/``, the run records that name a holder):
how long a command waits for a lock, where a process runs, and the rule
that a holder on this machine whose process is gone is stale at once.
The sync protocol owns them (``sync/holders.py``), since its leases apply
them; this module names them for everything above the protocol."""

from swamp.datastore.sync.holders import UNKNOWN, holder_exited, lock_timeout_ms, machine_identity

__all__ = ["UNKNOWN", "holder_exited", "lock_timeout_ms", "machine_identity"]
