"""The `swamp` of the documentation's examples (tests/docs/fork_shim.py) is,
to the shell that runs it, the command itself: it writes where the shell
writes, in order; it exits as the command exits; a signal sent to it
reaches the command; and without its server it runs the real swamp."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import fork_client
from tests.docs.conftest import fork_shim
from tests.fixtures.servers import free_port

VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def shim(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWAMP_", "PYTEST_"))}
    server = fork_client.Server(env)
    path = tmp_path / "bin" / "swamp"
    path.parent.mkdir()
    path.write_text(fork_shim(server))
    path.chmod(0o755)
    env = {**env, "PATH": f"{path.parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"}
    yield path, env, server
    server.stop()


def _bash(script: str, env: dict, cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], env=env, cwd=cwd, capture_output=True, text=True, timeout=60, **kw)


def test_its_output_lands_in_the_shells_file_in_order(shim, tmp_path):
    _, env, _ = shim
    got = _bash("{ echo before; swamp --version; echo after; } > out.txt 2>&1", env, tmp_path)
    assert got.returncode == 0, got.stderr
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert lines[0] == "before" and lines[1].startswith("swamp ") and lines[2] == "after", lines


def test_it_exits_and_writes_as_the_real_command(shim, tmp_path):
    _, env, _ = shim
    _bash("swamp repo init repo", env, tmp_path)
    forked = _bash("swamp model get nosuch --json", env, tmp_path / "repo")
    real = _bash(f"{VENV_BIN / 'swamp'} model get nosuch --json", env, tmp_path / "repo")
    assert forked.returncode == real.returncode == 1
    assert (forked.stdout, forked.stderr) == (real.stdout, real.stderr)


def test_a_signal_to_it_ends_the_command(shim, tmp_path):
    path, env, _ = shim
    _bash("swamp repo init repo", env, tmp_path)
    port = free_port()
    proc = subprocess.Popen([str(path), "serve", "--port", str(port)], env=env, cwd=tmp_path / "repo",
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import urllib.request

    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None, "serve did not start"
            time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    with pytest.raises(OSError):  # the forked server is gone, not only the shim
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()


def test_without_its_server_it_runs_the_real_swamp(shim, tmp_path):
    _, env, server = shim
    server.stop()
    server.stop = lambda: None  # stopped once, here
    got = _bash("swamp --version", env, tmp_path)
    assert got.returncode == 0 and got.stdout.startswith("swamp "), got.stderr
