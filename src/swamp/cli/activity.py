"""A live status line on stderr while a method or a workflow runs: after a
second, a spinner with the elapsed time, what is running and the last line
logged. On a terminal only: never in --json mode, quiet mode or a pipe."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from swamp.cli.state import CliState

FRAMES = "|/-\\"
#: seconds before the line appears: quick commands print nothing extra
DELAY = 1.0


class Activity:
    """Use as a context manager; ``doing(text)`` and ``logged(line)`` may be
    called from any thread."""

    def __init__(self, what: str, stream: TextIO, *, delay: float = DELAY, interval: float = 0.1) -> None:
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self._what = what
        self._last = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="swamp-activity", daemon=True)
        self._t0 = time.monotonic()
        self._drawn = 0

    def doing(self, what: str) -> None:
        with self._lock:
            self._what = what

    @property
    def listener(self):
        """What to hand a run as its ``on_log``: ``logged``."""
        return self.logged

    def logged(self, line: str) -> None:
        with self._lock:
            self._last = line.strip().splitlines()[-1] if line.strip() else self._last

    def __enter__(self) -> "Activity":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._clear()

    def line(self, frame: int) -> str:
        with self._lock:
            what, last = self._what, self._last
        elapsed = time.monotonic() - self._t0
        text = f"{FRAMES[frame % len(FRAMES)]} {what} {elapsed:.1f}s"
        return text + (f"  {last}" if last else "")

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        frame = 0
        while not self._stop.is_set():
            text = self.line(frame)[:_width() - 1]
            with self._lock:
                self.stream.write("\r" + text + " " * max(0, self._drawn - len(text)))
                self.stream.flush()
                self._drawn = len(text)
            frame += 1
            self._stop.wait(self.interval)

    def _clear(self) -> None:
        with self._lock:
            if self._drawn:
                self.stream.write("\r" + " " * self._drawn + "\r")
                self.stream.flush()
                self._drawn = 0

    def say(self, text: str) -> None:
        """Print a line above the status line (which is redrawn after it)."""
        from swamp.cli import colour

        self._clear()
        with self._lock:
            self.stream.write(colour.line(text, colour.enabled(self.stream)) + "\n")
            self.stream.flush()


def _width() -> int:
    import shutil

    return shutil.get_terminal_size((100, 20)).columns


class _Quiet:
    """No status line: the same calls, doing nothing."""

    def doing(self, what: str) -> None:
        pass

    def logged(self, line: str) -> None:
        pass

    #: nothing shows a run's lines: a run given no listener does not cut its output into lines for it
    listener = None

    def say(self, text: str) -> None:
        sys.stderr.write(text + "\n")

    def __enter__(self) -> "_Quiet":
        return self

    def __exit__(self, *exc) -> None:
        pass


def activity_for(state: CliState, what: str, stream: TextIO | None = None):
    stream = stream or sys.stderr
    if state.json or state.quiet or not stream.isatty():
        return _Quiet()
    return Activity(what, stream)
