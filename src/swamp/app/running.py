"""Method runs in progress on this machine, so `swamp model cancel` can stop
one: a small marker per run that the `swamp` command started, kept under the
checkout's local state (`.swamp/cache/running/`, never synced) while it runs.

Cancelling interrupts that process as Ctrl-C would, with a signal of its
own (SIGUSR2, named in the marker): a run started in the background of a
script, by nohup or by cron inherits SIGINT ignored, and must still be
cancellable, while Ctrl-C at the terminal goes on leaving it alone. The
method stops (the processes it started are stopped by swamp.util.processes,
the one mechanism a cancelled workflow step, local or on a worker, goes
through too: SIGTERM to each process group, SIGKILL after a grace period),
the run is recorded as cancelled, what it wrote so far is kept and published. Runs
inside a workflow are cancelled with `swamp workflow cancel` (then nothing
of the step is published); runs a server started are not cancellable this
way (the server would stop)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from swamp.errors import NotFoundError, SwampError
from swamp.util import clock
from swamp.util.atomic import atomic_write
from swamp.util.ids import hostname, new_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo

# The other imports sit in the functions that use them: `model method run` loads this module,
# and with them at the top a plain run loads pydantic (bench/startup_bench.py).


def _dir(repo: Repo) -> Path:
    return repo.local_dir / "cache" / "running"


@contextlib.contextmanager
def marked(repo: Repo, model: str, method: str) -> Iterator[None]:
    """While the body runs, this process is known to run ``model.method``."""
    from swamp.datastore.locks import machine_identity

    path = _dir(repo) / f"{new_id()}.json"
    doc = {"model": model, "method": method, "pid": os.getpid(), "host": hostname(),
           "machine": machine_identity(os.getpid()), "startedAt": clock.isoformat()}
    ticks = _start_ticks(os.getpid())
    if ticks is not None:
        doc["processStart"] = ticks
    # Listening before the marker names the signal, and until it is gone:
    # a cancel that finds the marker never meets SIGUSR2's default (the
    # process ended outright, nothing recorded).
    before = _listen_for_cancel()
    if before is not None:
        doc["cancelSignal"] = CANCEL_SIGNAL.name
    try:
        # not durable (no fsync): the marker means nothing once its process is gone
        atomic_write(path, json.dumps(doc), durable=False)
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            # Leave no trace: a command refused before it ran must leave the
            # checkout as it found it.
            for directory in (path.parent, path.parent.parent):
                with contextlib.suppress(OSError):
                    directory.rmdir()  # only when empty
    finally:
        if before is not None:
            signal.signal(CANCEL_SIGNAL, before)


def running(repo: Repo) -> list[dict]:
    """The method runs in progress here, oldest first (markers of processes
    that died are dropped)."""
    out = []
    for path in sorted(_dir(repo).glob("*.json")) if _dir(repo).is_dir() else []:
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if _here(doc) and not _alive(doc.get("pid", 0), doc.get("processStart")):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            continue
        out.append({**doc, "marker": path})
    return sorted(out, key=lambda d: d["startedAt"])


#: what 'model cancel' sends a run that listens for it (KeyboardInterrupt there, as Ctrl-C)
CANCEL_SIGNAL = signal.SIGUSR2


def _listen_for_cancel():
    """Make CANCEL_SIGNAL interrupt this process as Ctrl-C does; the handler
    it had, to put back (None where a handler cannot be set: not the main
    thread, so a cancel sends SIGINT as before)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(CANCEL_SIGNAL, signal.default_int_handler)


def cancel(repo: Repo, model: str, *, wait_s: float = 30.0) -> dict:
    """Interrupt the `model method run` of ``model`` running on this
    machine, and wait (bounded) until it has recorded itself cancelled."""
    found = [r for r in running(repo) if r["model"] == model]
    if not found:
        raise NotFoundError(f"no method run of model {model!r} is running here",
                            hint="a run inside a workflow stops with 'swamp workflow cancel'")
    run = found[-1]
    if not _here(run):
        raise SwampError(f"the run of {model!r} is on {run['host']} (another machine, or another PID namespace "
                         "with the same host name); cancel it there", code="elsewhere")
    # a marker from a run that does not name its signal (an older swamp): SIGINT, as then
    os.kill(run["pid"], CANCEL_SIGNAL if run.get("cancelSignal") == CANCEL_SIGNAL.name else signal.SIGINT)
    deadline = time.monotonic() + wait_s
    while run["marker"].exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return {"model": model, "method": run["method"], "pid": run["pid"], "cancelled": not run["marker"].exists()}


def _here(doc: dict) -> bool:
    """Whether a marker's pid is one of this machine's: same host name and,
    when recorded, the same boot and PID namespace (a checkout shared by
    two containers with one host name holds markers of both)."""
    from swamp.datastore.locks import machine_identity

    if doc.get("host") != hostname():
        return False
    machine = doc.get("machine")
    return machine is None or machine == machine_identity(os.getpid())


def _alive(pid: int, started: str | None = None) -> bool:
    """Whether the process that wrote a marker still runs: its pid is in
    use and, where the marker says when that process started, by the same
    process (a run killed without removing its marker leaves its pid to be
    reused; a cancel must not signal whatever took it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started is None or _start_ticks(pid) in (None, started)


def _start_ticks(pid: int) -> str | None:
    """When a process started, in clock ticks after boot (Linux's
    /proc/PID/stat, field 22); None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the name, in parentheses, may hold spaces
    return fields[19].decode() if len(fields) > 19 else None
