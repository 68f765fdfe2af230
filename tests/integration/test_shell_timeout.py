"""command/shell's `timeout` stops what the command started too, not only
`sh`: a background child holding the output pipes neither outlives the run
nor keeps it waiting."""

from __future__ import annotations

import os
import time

from tests.helpers import cli, init_repo


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_timeout_stops_the_commands_children(tmp_path):
    repo = init_repo(tmp_path / "r")
    pidfile = tmp_path / "child.pid"
    assert cli(repo, "model", "create", "command/shell", "slow", "--global-arg",
               f"run=sleep 60 & echo $! > {pidfile}; wait", "--global-arg", "timeout=500").code == 0
    r = cli(repo, "model", "method", "run", "slow", "execute", timeout=40)  # hung until the child ended, before
    assert r.code == 1 and "timed out after 500 ms" in r.data["error"]
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
    # the run wrote its log, and no result
    assert cli(repo, "data", "get", "slow", "result").code != 0
