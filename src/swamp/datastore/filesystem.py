"""The filesystem datastore: a plain directory (``.swamp/`` by default, or
an external path shared by several processes). Nothing to sync; locks are
lock files under ``.locks/``."""

from __future__ import annotations

import threading
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from .base import Datastore
from .locks import FileLock, force_release, list_locks


class ReentrantLocks:
    """Per-process bookkeeping so a thread that already holds a lock can take
    it again (a workflow step holding a model's lock calling the runner)."""

    def __init__(self) -> None:
        self._held: dict[tuple[int, str], int] = defaultdict(int)
        self._mutex = threading.Lock()

    def enter(self, name: str) -> bool:
        key = (threading.get_ident(), name)
        with self._mutex:
            self._held[key] += 1
            return self._held[key] > 1

    def exit(self, name: str) -> None:
        key = (threading.get_ident(), name)
        with self._mutex:
            self._held[key] -= 1
            if self._held[key] == 0:
                del self._held[key]


class FilesystemDatastore(Datastore):
    kind = "filesystem"

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).absolute()
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock_dir = self.root / ".locks"
        self._reentrant = ReentrantLocks()

    @contextmanager
    def lock(self, name: str, *, timeout_ms: int | None = None):
        if self._reentrant.enter(name):
            try:
                yield None
            finally:
                self._reentrant.exit(name)
            return
        try:
            with FileLock(self._lock_dir, name, timeout_ms=timeout_ms) as held:
                yield held
        finally:
            self._reentrant.exit(name)

    def lock_status(self) -> list[dict]:
        return list_locks(self._lock_dir)

    def force_release(self, name: str) -> bool:
        return force_release(self._lock_dir, name)
