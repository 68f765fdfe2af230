"""Transfer progress for a caller's hook (a progress bar on a terminal).

``SyncEngine.on_progress(phase, files_done, files_total, bytes_done,
bytes_total)``:

- ``phase``: "download" (the files a pull writes) or "upload" (the files a
  push sends; deletes transfer nothing and are not counted);
- ``files_total``/``bytes_total``: the files of the phase and the sum of
  their sizes (as recorded in the commits pulled, or as found by the push's
  diff); files with identical content are transferred once but each counts;
- called once when a phase starts, with 0 done, then once after each file
  (written, or sent or found already stored; a file that turned out to be
  in the way or gone counts as done too), so a phase that completes ends
  with done == total. Never called for a phase with nothing to transfer, so
  a sync with nothing to do never calls it;
- a push that loses the commit race pulls (maybe a "download" phase) and
  starts a new "upload" phase for what is left to send;
- calls may come from the engine's pool threads, but are made one at a
  time, in order: ``files_done`` and ``bytes_done`` never go down. The hook
  should be quick (it holds up the transfer) and must not raise.
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
