"""A process that has swamp's third-party libraries imported once and forks a
fresh child for each `python -m swamp ...` the tests run (tests/helpers.py
`cli`), so that the suite does not pay pydantic's, click's and the YAML,
CEL and crypto libraries' import for each of its thousands of commands.

The child is a real process with its own pid, working directory,
environment, argv and standard streams; it runs `swamp` exactly as
`python -m swamp` does (runpy, the same __main__) and ends as a process
does (threads joined, atexit handlers run, streams flushed; see `_end`). swamp's own modules are imported in the child, never here:
they read their environment at import (SWAMP_FSYNC, for one), and a test of
what a command imports must see what the command imports.

Protocol, one request per connection on a Unix socket: the test sends one
JSON line {"argv", "env", "cwd", "stdin", "stdout", "stderr"} (the three
streams are file paths); the server answers {"pid"} when the child is
started, then {"status"} (os.waitstatus_to_exitcode) when it ends. A
caller that has streams of its own (tests/docs/fork_shim.py, the `swamp`
of the documentation's examples) sends the byte "F" first, with its
descriptors 0, 1 and 2 attached (SCM_RIGHTS), and no stream paths: the
child then writes where the caller would have, at the same offset.

    python tests/fork_server.py SOCKET_PATH
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

#: imported once here; none starts a thread or reads swamp's environment
PRELOAD = (
    "pydantic", "pydantic_core", "annotated_types", "typing_extensions", "click", "ruamel.yaml",
    "cel_expr_python", "cryptography.hazmat.primitives.ciphers.aead", "cryptography.hazmat.primitives.hashes",
    "email.utils", "importlib.metadata", "json", "subprocess", "tempfile", "uuid", "hashlib", "logging",
    "dataclasses", "datetime", "zoneinfo", "ipaddress", "inspect", "shutil", "zipfile", "socket", "ssl",
    "concurrent.futures", "urllib.parse", "typing", "re", "textwrap", "platform",
    # a command on a GCS datastore imports google-cloud-storage: about 0.3 s each
    "google.cloud.storage", "google.auth.credentials", "google.auth.exceptions", "google.api_core.exceptions",
)


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    # pydantic's plugin list is read once per process: read it here
    try:
        from pydantic.plugin._loader import get_plugins

        get_plugins()
    except Exception:  # noqa: BLE001  (an optional warm-up)
        pass


def _child(req: dict, fds: list[int]) -> None:
    """Become `python -m swamp ARGV` (its streams ``fds`` when the caller
    passed its own, else the request's paths); never returns."""
    import runpy

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.setsid()  # a group of its own, as a command started by a shell's job control would not share ours
    if fds:
        for fd, passed in zip((0, 1, 2), fds):
            os.dup2(passed, fd)
        for passed in fds:
            if passed > 2:
                os.close(passed)
    else:
        for fd, path, mode in ((0, req["stdin"], os.O_RDONLY), (1, req["stdout"], os.O_WRONLY),
                               (2, req["stderr"], os.O_WRONLY)):
            f = os.open(path, mode)
            os.dup2(f, fd)
            os.close(f)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = ["-m", *req["argv"]]
    try:
        runpy.run_module("swamp", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    except BaseException:  # noqa: BLE001  (as the interpreter would: the traceback, then 1)
        import traceback

        traceback.print_exc()
        code = 1
    _end(code)


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _close_what_finalization_closes() -> None:
    """The objects whose teardown a user can see on disk: a SQLite
    connection's close checkpoints its WAL and removes the -wal and -shm
    files; a file left open has its buffer written when it is freed."""
    import gc
    import io
    import sqlite3

    files = (io.BufferedWriter, io.BufferedRandom, io.TextIOWrapper)
    for obj in gc.get_objects():
        # by the object's real type: isinstance would ask every object for its
        # __class__ (five times slower over the ~35,000 objects of a command)
        kind = type(obj)
        if issubclass(kind, sqlite3.Connection):
            try:
                obj.close()
            except sqlite3.Error:
                pass
        elif issubclass(kind, files) and obj is not sys.stdout and obj is not sys.stderr:
            try:
                if not obj.closed:
                    obj.flush()
            except (OSError, ValueError):
                pass


def _end(code: int) -> None:
    """What an interpreter's exit does that a command can notice (its
    threads joined, its atexit handlers run, its SQLite connections closed
    and files flushed, its streams flushed), without tearing every module
    down one by one: that teardown is a fifth of a short command's time,
    and the rest of it reaches no file and no other process."""
    import threading

    threading._shutdown()  # waits for the non-daemon threads, as Py_Finalize does first
    import atexit

    atexit._run_exitfuncs()
    _close_what_finalization_closes()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _answer(conn: socket.socket) -> None:
    """In a forked waiter: start the child, report its pid, then its end."""
    first, fds, _, _ = socket.recv_fds(conn, 1, 3)
    if first != b"F":
        fds = []
    line = conn.makefile("rb").readline()
    req = json.loads(line if first == b"F" else first + line)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _child(req, fds)
    for passed in fds:
        os.close(passed)  # the child has them: this waiter must not keep a pipe open after it ends
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


def serve(path: str) -> None:
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    parent = os.getppid()
    listener.settimeout(2)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:
                os._exit(0)  # the test process is gone (killed): no one will ask again
            continue
        conn.settimeout(None)
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                _answer(conn)
            except BaseException:  # noqa: BLE001  (the test sees the connection close)
                os._exit(70)
            os._exit(0)
        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
