"""Transfer progress for a caller's hook (a progress bar on a terminal).

``SyncEngine.on_progress(phase, files_done, files_total, bytes_done,
bytes_total)``, phase "download" or "upload": called once when a transfer
phase starts (0 done) and once after each file, never for a phase with
nothing to transfer. Calls may come from the engine's pool threads; they are
made one at a time, in order, so ``files_done`` and ``bytes_done`` never go
down and the last call of a phase that completes has done == total.
"""

from __future__ import annotations

import threading
from typing import Callable

ProgressHook = Callable[[str, int, int, int, int], None]


class Progress:
    def __init__(self, hook: ProgressHook | None, phase: str, files: int, nbytes: int) -> None:
        self._hook = hook if files > 0 else None
        self.phase = phase
        self.files_total = files
        self.bytes_total = nbytes
        self.files_done = 0
        self.bytes_done = 0
        self._lock = threading.Lock()
        self._report()

    def advance(self, files: int = 1, nbytes: int = 0) -> None:
        if self._hook is None:
            return
        with self._lock:
            self.files_done += files
            self.bytes_done += nbytes
            self._report()

    def _report(self) -> None:
        if self._hook is not None:
            self._hook(self.phase, self.files_done, self.files_total, self.bytes_done, self.bytes_total)
