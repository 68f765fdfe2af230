"""Review finding: a process killed (kill -9) right after creating its lock
file, before writing who it is, leaves an anonymous lock that nobody can
tell is dead: every later run of that model waits out the whole TTL (30 s)
or fails with exit 75 "held by another process" (S6)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from swamp.datastore.locks import FileLock
from tests.helpers import _env

DIE_AFTER_CREATE = textwrap.dedent('''
    import os, sys
    real_open = os.open

    def open_then_die(path, flags, *a, **k):
        fd = real_open(path, flags, *a, **k)
        if flags & os.O_EXCL and os.path.dirname(str(path)) == sys.argv[1]:
            os._exit(9)  # as kill -9, right after the file exists
        return fd

    os.open = open_then_die
    from swamp.datastore.locks import FileLock
    FileLock(sys.argv[1], "model/acme/x/1", timeout_ms=1000).acquire()
''')


def test_a_holder_killed_while_creating_its_lock_does_not_block_the_next(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    p = subprocess.run([sys.executable, "-c", DIE_AFTER_CREATE, str(locks)], env=_env(), capture_output=True)
    assert p.returncode == 9, p.stderr
    # Well within the 30 s TTL: the dead holder is recognised (or left nothing).
    with FileLock(locks, "model/acme/x/1", timeout_ms=2000):
        pass
