"""On a worker: what a running step holds so that a cancel reaches it and
its log lines stream back to the dispatching run.

Cancel. The dispatching side cancels the step's Dask future (``swamp
workflow cancel``, serve's cancel, Ctrl-C of ``workflow run``); when the
dispatching process dies, the scheduler releases its futures the same way.
Either way the worker sees the step's task leave the ``executing`` state
(``watch``, on the worker's event loop, every ``WATCH_INTERVAL``), stops the
processes the step started (swamp.util.processes, the one mechanism a local
step and `model cancel` use too: each in a process group of its own,
SIGTERM, then SIGKILL after a grace period) and marks the step cancelled: ``app/remote_steps.run_step``
then drops what the step wrote before its push, so nothing of it is
published. A method that starts no process runs on to its end and is
dropped the same way.

Logs. Each line the method logs goes to the dispatcher's Dask event topic
(``Worker.log_event``), at most ``MAX_LINES`` per step of at most
``MAX_LINE`` characters; the whole log stays in the step's output record."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from swamp.util import processes

#: how often the worker looks for cancelled steps (seconds)
WATCH_INTERVAL = 0.1
#: log lines streamed per step; the rest are in the output record's log
MAX_LINES = 1000
#: characters of a streamed line
MAX_LINE = 2000

_active: dict[str, "StepControl"] = {}
_mutex = threading.Lock()


class StepControl(processes.Control):
    """One running step: its Dask key, the processes it started and
    whether it was cancelled (processes.Control), where its log lines go."""

    def __init__(self, key: str | None, *, topic: str | None = None, step: str = "", emit=None) -> None:
        super().__init__()
        self.key = key
        self.topic = topic
        self.step = step
        self._emit = emit  # (topic, message): Worker.log_event
        self._lines = 0

    # -------------------------------------------------------------- logs
    def log(self, line: str) -> None:
        """Called by the runner with each (already redacted) line."""
        if self._emit is None or self.topic is None:
            return
        with self._lock:
            self._lines += 1
            n = self._lines
        if n > MAX_LINES + 1:
            return
        if n == MAX_LINES + 1:
            line = f"(more lines in the step's output record; {MAX_LINES} were streamed)"
        elif len(line) > MAX_LINE:
            line = line[:MAX_LINE] + " …"
        with contextlib.suppress(Exception):  # a line that cannot go never fails the step
            self._emit(self.topic, {"key": self.key, "line": line})


@contextlib.contextmanager
def running(control: StepControl):
    """While the body runs in this thread, the processes it starts belong
    to ``control`` and a cancel of its Dask task reaches it."""
    if control.key is not None:
        with _mutex:
            _active[control.key] = control
    try:
        with processes.owning(control):
            yield control
    finally:
        if control.key is not None:
            with _mutex:
                _active.pop(control.key, None)


def check(worker) -> None:
    """Cancel every step whose Dask task is no longer executing here (its
    future was cancelled, or its client went away)."""
    with _mutex:
        controls = list(_active.values())
    for control in controls:
        ts = worker.state.tasks.get(control.key)
        if ts is None or ts.state not in ("executing", "long-running"):
            control.cancel()


def cancel_all() -> None:
    """The worker stops: the processes of the steps it runs go with it
    (they run in sessions of their own, so no signal of the worker's
    terminal reaches them). The dispatchers see "worker lost"."""
    with _mutex:
        controls = list(_active.values())
    for control in controls:
        control.cancel(grace=0)  # the worker is going: no time for a grace period


async def watch(worker) -> None:
    """Run on the worker's event loop for as long as the worker runs."""
    while True:
        try:
            check(worker)
        except Exception:  # noqa: BLE001 - the watch must outlive one bad look
            pass
        await asyncio.sleep(WATCH_INTERVAL)
