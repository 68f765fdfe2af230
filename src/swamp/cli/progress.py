"""A transfer progress bar on stderr, for a terminal only (never in --json
mode, never when quiet, never into a pipe)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

from swamp.cli.state import CliState
from swamp.cli.output import human_size

Progress = Callable[[str, int, int, int, int], None]




class TransferBar:
    """Called as (phase, files_done, files_total, bytes_done, bytes_total),
    possibly from several threads; redraws at most every ``interval`` s."""

    WIDTH = 24

    def __init__(self, stream: TextIO | None = None, interval: float = 0.1) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval
        self._lock = threading.Lock()
        self._phase: str | None = None
        self._last = 0.0

    def __call__(self, phase: str, files_done: int, files_total: int, bytes_done: int, bytes_total: int) -> None:
        with self._lock:
            now = time.monotonic()
            finished = files_done >= files_total
            if phase == self._phase and not finished and now - self._last < self.interval:
                return
            if self._phase is not None and phase != self._phase:
                self.stream.write("\n")
            self._phase, self._last = phase, now
            frac = files_done / files_total if files_total else 1.0
            filled = int(frac * self.WIDTH)
            self.stream.write(f"\r{phase:<8} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
                              f"{files_done}/{files_total} files  {human_size(bytes_done)}/{human_size(bytes_total)}")
            if finished:
                self.stream.write("\n")
                self._phase = None
            self.stream.flush()


def progress_for(state: CliState, stream: TextIO | None = None) -> Progress | None:
    stream = stream or sys.stderr
    if state.json or state.quiet or not stream.isatty():
        return None
    return TransferBar(stream)
