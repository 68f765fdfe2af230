"""The filesystem datastore: a plain directory (``.swamp/`` by default, or
an external path shared by several processes, on one machine or over a
network filesystem). Nothing to sync.

Its locks are leases, the very mechanism of the shared datastores
(sync/lease.py), held as objects of a local-directory object store under
``.locks/``: exclusive across processes and hosts sharing the directory,
heartbeated, taken over once stale (a holder on this machine whose process
is gone at once, one elsewhere once this process has watched it unchanged
for its ttl), and fenced by compare-and-swap."""

from __future__ import annotations

import contextlib
import re
import threading
from pathlib import Path

from .base import Datastore

#: the leases live in ``.locks/<namespace>/leases/``
LEASE_NAMESPACE = "default"


class FilesystemDatastore(Datastore):
    kind = "filesystem"

    def __init__(self, root: Path | str) -> None:
        super().__init__(root)
        self._lock_dir = self.root / ".locks"

    def _lease_store(self):
        from swamp.datastore.objectstore.local import LocalDirObjectStore
        from swamp.datastore.sync.layout import Layout

        return LocalDirObjectStore(self._lock_dir), Layout(LEASE_NAMESPACE)

    @contextlib.contextmanager
    def _acquire(self, name: str, timeout_ms: int | None, cancelled: threading.Event | None):
        from swamp.datastore.sync.lease import Lease
        from swamp.util.ids import hostname

        store, layout = self._lease_store()
        peer = re.sub(r"[^A-Za-z0-9_.-]", "-", hostname())[:64] or "local"
        with Lease(store, layout, name, peer=peer, timeout_ms=timeout_ms, cancelled=cancelled) as lease:
            self.held.add(name, lease)
            try:
                yield lease
            finally:
                self.held.remove(lease)

    def lock_status(self) -> list[dict]:
        if not self._lock_dir.is_dir():
            return []
        from swamp.datastore.sync.lease import lease_status

        return lease_status(*self._lease_store())

    def force_release(self, name: str) -> bool:
        if not self._lock_dir.is_dir():
            return False
        from swamp.datastore.sync.lease import force_release

        return force_release(*self._lease_store(), name)
