"""Review finding: a process killed (kill -9) right after taking its lock
left a lock that the next run waited out for its whole TTL (30 s) or failed
with exit 75 (S6). A lock is now a lease whose body (holder, host, pid) is
complete the moment it exists (the local object store links a finished
file into place), and a holder on this machine whose process is gone is
stale at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from swamp.datastore.filesystem import FilesystemDatastore
from tests.helpers import _env

DIE_HOLDING = textwrap.dedent('''
    import os, sys
    from swamp.datastore.filesystem import FilesystemDatastore
    with FilesystemDatastore(sys.argv[1]).lock("model/acme/x/1", timeout_ms=1000):
        os._exit(9)  # as kill -9, holding it
''')


def test_a_holder_killed_while_holding_its_lock_does_not_block_the_next(tmp_path):
    p = subprocess.run([sys.executable, "-c", DIE_HOLDING, str(tmp_path)], env=_env(), capture_output=True)
    assert p.returncode == 9, p.stderr
    ds = FilesystemDatastore(tmp_path)
    assert [s["stale"] for s in ds.lock_status()] == [True]
    # Well within the 30 s TTL: the dead holder is recognised.
    with ds.lock("model/acme/x/1", timeout_ms=2000):
        pass
