"""The filesystem datastore: a plain directory (``.swamp/`` by default, or
an external path shared by several processes). Nothing to sync; locks are
lock files under ``.locks/``."""

from __future__ import annotations

import contextlib
from pathlib import Path

from .base import Datastore
from .locks import FileLock, force_release, list_locks


class FilesystemDatastore(Datastore):
    kind = "filesystem"

    def __init__(self, root: Path | str) -> None:
        super().__init__(root)
        self._lock_dir = self.root / ".locks"

    @contextlib.contextmanager
    def _acquire(self, name: str, timeout_ms: int | None):
        with FileLock(self._lock_dir, name, timeout_ms=timeout_ms) as lock:
            self.held.add(name, lock)
            try:
                yield lock
            finally:
                self.held.remove(lock)

    def lock_status(self) -> list[dict]:
        return list_locks(self._lock_dir)

    def force_release(self, name: str) -> bool:
        return force_release(self._lock_dir, name)
