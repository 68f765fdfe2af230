"""A transfer progress bar on stderr, for a terminal only (never in --json
mode, never when quiet, never into a pipe)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

from swamp.cli.options import CliState

Progress = Callable[[str, int, int, int, int], None]


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


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
                              f"{files_done}/{files_total} files  {_size(bytes_done)}/{_size(bytes_total)}")
            if finished:
                self.stream.write("\n")
                self._phase = None
            self.stream.flush()


def progress_for(state: CliState, stream: TextIO | None = None) -> Progress | None:
    stream = stream or sys.stderr
    if state.json or state.quiet or not stream.isatty():
        return None
    return TransferBar(stream)
