"""The tests' side of tests/fork_server.py: run `python -m swamp ARGV` as a
child forked from a process that has the third-party libraries imported,
instead of a new interpreter. One server per test process, started at the
first command and stopped when the process ends.

`run` answers None when the command cannot be forked faithfully: its
environment differs from the server's in what an interpreter reads only at
start (PYTHON*, LD_*, locale, TZ, the libfaketime variables) or in what a
swamp module reads at import (SWAMP_FSYNC), or the test asks for a fresh
interpreter (FRESH_PROCESS in its env). The caller then starts a real
interpreter, as before. SWAMP_TEST_FORKS=0 turns forking off for a run."""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: put in a command's env by a test that inspects the interpreter itself (what it imported)
FRESH_PROCESS = "SWAMP_TEST_FRESH_PROCESS"
AT_START = ("PYTHON", "LD_", "LC_", "FAKETIME", "DYLD_")
AT_START_NAMES = ("LANG", "LANGUAGE", "TZ", "SWAMP_FSYNC")
_SERVER = Path(__file__).resolve().with_name("fork_server.py")


def startup_view(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(AT_START) or k in AT_START_NAMES}


class Server:
    """A fork server started with ``env`` (its startup view is ``view``),
    listening on ``path``."""

    def __init__(self, env: dict) -> None:
        self.dir = tempfile.mkdtemp(prefix="swamp-forks-")
        self.path = os.path.join(self.dir, "s")
        self.view = startup_view(env)
        self.proc = subprocess.Popen([sys.executable, str(_SERVER), self.path], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self.dir)
        if self.proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("the fork server did not start")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


_lock = threading.Lock()
_server: Server | None = None
_broken = False


def _get(server_env) -> Server | None:
    global _server, _broken
    with _lock:
        if _server is None and not _broken:
            try:
                _server = Server(server_env())
                atexit.register(_server.stop)
            except (OSError, RuntimeError):
                _broken = True
        return _server


def run(argv: list[str], env: dict, cwd: Path | str, input: str | None, timeout: float, server_env,
        ) -> subprocess.CompletedProcess | None:
    """`python -m swamp ARGV` forked (text in and out, as subprocess.run with
    capture_output=True, text=True); None when it must be a real interpreter.
    ``server_env()`` is the environment the server starts with (the
    commands' usual one), at the first command."""
    if os.environ.get("SWAMP_TEST_FORKS") == "0" or FRESH_PROCESS in env:
        return None
    server = _get(server_env)
    if server is None or startup_view(env) != server.view:
        return None
    with tempfile.TemporaryDirectory(prefix="swamp-cmd-") as d:
        streams = {name: os.path.join(d, name) for name in ("stdin", "stdout", "stderr")}
        Path(streams["stdin"]).write_text(input or "")
        for name in ("stdout", "stderr"):
            Path(streams[name]).touch()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(server.path)
            conn.sendall(json.dumps({"argv": argv, "env": env, "cwd": str(cwd), **streams}).encode() + b"\n")
            answers = conn.makefile("r")
            pid = json.loads(answers.readline())["pid"]
            conn.settimeout(timeout)
            try:
                line = answers.readline()
            except TimeoutError:
                _kill(pid)
                raise subprocess.TimeoutExpired(["swamp", *argv], timeout) from None
            code = json.loads(line)["status"]
        finally:
            conn.close()
        out, err = Path(streams["stdout"]).read_text(errors="replace"), Path(streams["stderr"]).read_text(errors="replace")
    return subprocess.CompletedProcess(["swamp", *argv], code, out, err)


def _kill(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)  # the child leads its own group: what it started goes too
    except ProcessLookupError:
        pass
