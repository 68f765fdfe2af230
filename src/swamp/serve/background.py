"""A server's background watches (the replica heartbeat, signal waits, the
run-duration watchdog): each is a daemon thread that wakes every few
seconds until the server stops it, and they all log the same way."""

from __future__ import annotations

import sys
import threading
from typing import Iterator


class Watch:
    #: the thread's name, as a debugger or py-spy shows it
    thread_name = "swamp-watch"

    def __init__(self, state, *, every_s: float) -> None:
        self.state = state
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self.loop, name=self.thread_name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)

    def ticks(self) -> Iterator[None]:
        """Once every ``every_s`` seconds, until stopped."""
        while not self._stop.wait(self.every_s):
            yield

    def loop(self) -> None:
        raise NotImplementedError


def log(text: str) -> None:
    print(f"swamp serve: {text}", file=sys.stderr, flush=True)
