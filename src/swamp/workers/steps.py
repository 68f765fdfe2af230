"""On a worker: what a running step holds so that a cancel reaches it and
its log lines stream back to the dispatching run.

Cancel. The dispatching side cancels the step's Dask future (``swamp
workflow cancel``, serve's cancel, Ctrl-C of ``workflow run``); when the
dispatching process dies, the scheduler releases its futures the same way.
Either way the worker sees the step's task leave the ``executing`` state
(``watch``, on the worker's event loop, every ``WATCH_INTERVAL``), kills the
processes the step started (each in a process group of its own, so its
children go too) and marks the step cancelled: ``app/remote_steps.run_step``
then drops what the step wrote before its push, so nothing of it is
published. A method that starts no process runs on to its end and is
dropped the same way.

Logs. Each line the method logs goes to the dispatcher's Dask event topic
(``Worker.log_event``), at most ``MAX_LINES`` per step of at most
``MAX_LINE`` characters; the whole log stays in the step's output record."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading

#: how often the worker looks for cancelled steps (seconds)
WATCH_INTERVAL = 0.1
#: log lines streamed per step; the rest are in the output record's log
MAX_LINES = 1000
#: characters of a streamed line
MAX_LINE = 2000

_local = threading.local()
_active: dict[str, "StepControl"] = {}
_mutex = threading.Lock()
_installed = False


class StepControl:
    """One running step: its Dask key, the processes it started, whether
    it was cancelled, where its log lines go."""

    def __init__(self, key: str | None, *, topic: str | None = None, step: str = "", emit=None) -> None:
        self.key = key
        self.topic = topic
        self.step = step
        self.cancelled = threading.Event()
        self._emit = emit  # (topic, message): Worker.log_event
        self._procs: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._lines = 0

    # ------------------------------------------------------------ cancel
    def adopt(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.append(proc)
            late = self.cancelled.is_set()
        if late:  # started while the cancel was under way
            _kill(proc)

    def cancel(self) -> None:
        with self._lock:
            if self.cancelled.is_set():
                return
            self.cancelled.set()
            procs = list(self._procs)
        for proc in procs:
            _kill(proc)

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
    install()
    _local.control = control
    if control.key is not None:
        with _mutex:
            _active[control.key] = control
    try:
        yield control
    finally:
        _local.control = None
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
        control.cancel()


async def watch(worker) -> None:
    """Run on the worker's event loop for as long as the worker runs."""
    while True:
        try:
            check(worker)
        except Exception:  # noqa: BLE001 - the watch must outlive one bad look
            pass
        await asyncio.sleep(WATCH_INTERVAL)


# ------------------------------------------------------ a step's processes
def install() -> None:
    """Make each process a step starts (subprocess.Popen, which every way
    of starting one in Python goes through) known to its StepControl, in a
    session of its own so that killing its group reaches its children.
    Outside a step, Popen is unchanged."""
    global _installed
    with _mutex:
        if _installed:
            return
        _installed = True
    original = subprocess.Popen.__init__

    def __init__(self, *args, **kwargs):
        control = getattr(_local, "control", None)
        if control is not None and len(args) < 16 and "process_group" not in kwargs:
            kwargs.setdefault("start_new_session", True)
        original(self, *args, **kwargs)
        if control is not None:
            control.adopt(self)

    subprocess.Popen.__init__ = __init__


def _kill(proc: subprocess.Popen) -> None:
    """The process, its group and every descendant still there."""
    try:
        import psutil

        family = psutil.Process(proc.pid).children(recursive=True)
    except Exception:  # noqa: BLE001 - gone already, or psutil missing
        family = []
    with contextlib.suppress(OSError):
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    for p in family:
        with contextlib.suppress(Exception):
            p.kill()
