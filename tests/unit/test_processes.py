"""swamp.util.processes: the one way a cancelled method's processes are
stopped (a local workflow step, `model cancel`, a step on a worker)."""

from __future__ import annotations

import os
import subprocess
import time

from swamp.util import processes


def _gone(pid: int, within: float = 30) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def _start(control, script: str, tmp_path) -> tuple[subprocess.Popen, int]:
    pid_file = tmp_path / "child.pid"
    with processes.owning(control):
        proc = subprocess.Popen(["/bin/sh", "-c", f"{script} & echo $! > {pid_file}; wait"])
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc, int(pid_file.read_text())


def test_a_cancel_stops_the_process_and_its_children(tmp_path):
    control = processes.Control()
    proc, child = _start(control, "sleep 60", tmp_path)
    assert os.getpgid(proc.pid) == proc.pid  # a session (and group) of its own
    control.cancel()
    assert control.cancelled.is_set()
    proc.wait(timeout=30)
    assert _gone(child)


def test_a_process_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    control = processes.Control()
    proc, child = _start(control, "trap '' TERM; sleep 60", tmp_path)
    control.cancel(grace=0.5)
    proc.wait(timeout=30)
    assert _gone(child)


def test_a_process_started_after_the_cancel_is_stopped_at_once(tmp_path):
    control = processes.Control()
    control.cancel()
    with processes.owning(control):
        proc = subprocess.Popen(["sleep", "60"])
    assert proc.wait(timeout=30) != 0


def test_outside_a_control_popen_is_unchanged():
    processes.install()
    proc = subprocess.Popen(["sleep", "0"])
    try:
        assert os.getpgid(proc.pid) == os.getpgid(0) or proc.poll() is not None
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def test_controls_nest_and_restore():
    outer, inner = processes.Control(), processes.Control()
    with processes.owning(outer):
        with processes.owning(inner):
            assert processes.current() is inner
        assert processes.current() is outer
    assert processes.current() is None
