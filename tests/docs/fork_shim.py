"""The `swamp` the documentation's examples find first on their PATH: it has
the command forked from a fork server (tests/fork_server.py) with this
process's own standard streams, instead of starting a new interpreter that
imports pydantic, click and the rest again (about 0.1 s of CPU a command,
over some 300 commands in the examples).

To the shell that runs it, it is the command: it passes its descriptors 0,
1 and 2 to the child, hands on the signals a shell or `timeout` sends
(SIGTERM, SIGINT, SIGHUP), and ends as the child ended, with its exit code
or by its signal. When the environment differs from the server's in what an
interpreter reads only at start, or the server is gone, it runs the real
`swamp` instead.

tests/docs/conftest.py writes it into a page's bin/ with the names below
set above this text: the server's SOCKET and startup VIEW, the REAL swamp,
and what counts as read at start (tests/fork_client.py's AT_START and
AT_START_NAMES). It imports only the standard
library, and runs with -IS (no site-packages, no PYTHON* variables)."""

import json
import os
import signal
import socket
import sys

SOCKET: str
VIEW: dict
REAL: str
AT_START: tuple
AT_START_NAMES: tuple


def _run_real() -> None:
    os.execv(REAL, [REAL, *sys.argv[1:]])


def main() -> None:
    env = dict(os.environ)
    view = {k: v for k, v in env.items() if k.startswith(AT_START) or k in AT_START_NAMES}
    if view != VIEW:
        _run_real()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(SOCKET)
    except OSError:
        _run_real()
    socket.send_fds(conn, [b"F"], [0, 1, 2])
    conn.sendall(json.dumps({"argv": sys.argv[1:], "env": env, "cwd": os.getcwd()}).encode() + b"\n")
    answers = conn.makefile("rb")
    pid = json.loads(answers.readline())["pid"]

    def hand_on(signum, _frame):
        try:
            os.killpg(pid, signum)  # the child leads its own group: what it started gets it too
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, hand_on)
    line = answers.readline()
    if not line:
        sys.exit(70)  # the waiter died: no exit status to give
    status = json.loads(line)["status"]
    if status < 0:  # ended by a signal: end by the same one
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


main()
