"""The processes a running method starts, so that a cancel stops them: the
one mechanism behind `swamp workflow cancel` (a local step), `swamp model
cancel` and a step cancelled on a worker (swamp.workers.steps).

While a thread runs a method under a ``Control`` (``owning``), every process
it starts (``subprocess.Popen``, which every way of starting one in Python
goes through) starts in a session of its own and is adopted by the
control. ``Control.cancel`` sends each adopted process group SIGTERM, then
SIGKILL (to the group and every descendant still there) after
``GRACE_S`` seconds; a process started after the cancel is stopped at
once. A process started without an ``env=`` of its own gets the control's
``environment`` when it has one (a method run's declared environment,
models/step_environment.py), never this process's whole environment.
Outside a control, Popen is unchanged."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading

#: seconds between SIGTERM and SIGKILL
GRACE_S = 5.0

_local = threading.local()
_mutex = threading.Lock()
_installed = False


class Control:
    """One method run: whether it was cancelled, the processes it started."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self._procs: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        #: the environment of a process the run starts without an ``env=`` (None: this process's)
        self.environment: dict[str, str] | None = None
        #: why it was cancelled when not by a person ("timed out after 5 s"): the run failed, with this error
        self.reason: str | None = None

    def adopt(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.append(proc)
            late = self.cancelled.is_set()
        if late:  # started while the cancel was under way
            stop(proc, grace=0)

    def cancel(self, grace: float | None = None, *, reason: str | None = None) -> None:
        """Stop the run's processes (SIGTERM, SIGKILL after ``grace``);
        returns at once. A second cancel does nothing. ``reason``: not a
        cancel but a failure (a timeout), the run's error."""
        with self._lock:
            if self.cancelled.is_set():
                return
            self.reason = reason
            self.cancelled.set()
            procs = list(self._procs)
        for proc in procs:
            stop(proc, grace=GRACE_S if grace is None else grace)


def current() -> Control | None:
    """The control of the method this thread runs, if any."""
    return getattr(_local, "control", None)


@contextlib.contextmanager
def owning(control: Control):
    """While the body runs in this thread, the processes it starts belong
    to ``control``. Nests: the previous control is restored after."""
    install()
    previous = current()
    _local.control = control
    try:
        yield control
    finally:
        _local.control = previous


def install() -> None:
    """Hook ``subprocess.Popen`` once per process (see the module's text)."""
    global _installed
    with _mutex:
        if _installed:
            return
        _installed = True
    original = subprocess.Popen.__init__

    def __init__(self, *args, **kwargs):
        control = current()
        if control is not None and len(args) < 16 and "process_group" not in kwargs:
            kwargs.setdefault("start_new_session", True)
        # (env is Popen's 11th positional parameter)
        if control is not None and control.environment is not None and len(args) < 11 and kwargs.get("env") is None:
            kwargs["env"] = dict(control.environment)
        original(self, *args, **kwargs)
        if control is not None:
            control.adopt(self)

    subprocess.Popen.__init__ = __init__


def stop(proc: subprocess.Popen, *, grace: float = GRACE_S) -> None:
    """SIGTERM to the process's group (or the process), then, after
    ``grace`` seconds in a background thread, SIGKILL to the group and to
    every descendant found now. Returns at once."""
    if proc.poll() is not None and not _group_alive(proc.pid):
        return
    try:
        import psutil

        family = psutil.Process(proc.pid).children(recursive=True)
    except Exception:  # noqa: BLE001 - gone already, or psutil missing
        family = []
    own_group = False
    with contextlib.suppress(OSError):
        own_group = os.getpgid(proc.pid) == proc.pid
    if grace > 0:
        _signal(proc, own_group, signal.SIGTERM)

    def kill() -> None:
        _signal(proc, own_group, signal.SIGKILL)
        for p in family:
            with contextlib.suppress(Exception):
                p.kill()

    if grace <= 0:
        kill()
        return

    def later() -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
        if proc.poll() is None or _group_alive(proc.pid) or any(_alive(p) for p in family):
            kill()

    threading.Thread(target=later, name="swamp-stop", daemon=True).start()


def _signal(proc: subprocess.Popen, own_group: bool, sig: int) -> None:
    if own_group:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, sig)
    with contextlib.suppress(OSError):
        proc.send_signal(sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except OSError:
        return False
    return True


def _alive(p) -> bool:
    try:
        return p.is_running() and p.status() != "zombie"
    except Exception:  # noqa: BLE001
        return False
