"""Temp files left by writers killed mid-write are swept when a datastore is
opened; a temp file a live writer is still writing never is."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from swamp.datastore.base import SWEEP_MARKER
from swamp.datastore.filesystem import FilesystemDatastore
from swamp.util import atomic


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_opening_sweeps_only_abandoned_temp_files(tmp_path):
    d = tmp_path / "ds" / "data" / "t" / "m" / "n" / "1"
    d.mkdir(parents=True)
    here = atomic.temp_prefix()[len(atomic.TMP_PREFIX):].split(".")[0]  # this host's tag
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        files = {
            "killed": d / f".tmp-{here}.{_dead_pid()}.abc",
            "live_other_process": d / f".tmp-{here}.{live.pid}.abc",
            "this_process": d / f"{atomic.temp_prefix()}abc",
            "other_host_fresh": d / ".tmp-0badc0de.123.abc",
            "other_host_old": d / ".tmp-0badc0de.456.abc",
            "old_style_old": d / ".tmp-k2j3h4",
        }
        for p in files.values():
            p.write_bytes(b"partial")
        old = time.time() - 2 * atomic.ABANDONED_AFTER_S
        for key in ("other_host_old", "old_style_old", "live_other_process"):
            os.utime(files[key], (old, old))  # a live writer's file is kept however old
        (d / "raw").write_bytes(b"done")

        FilesystemDatastore(tmp_path / "ds").write_bytes("files/new", b"x")

        left = {k for k, p in files.items() if p.exists()}
        assert left == {"live_other_process", "this_process", "other_host_fresh"}
        assert (d / "raw").read_bytes() == b"done"
    finally:
        live.kill()
        live.wait()


def _write(root):
    FilesystemDatastore(root).write_bytes("files/new", b"x")


def test_opening_alone_writes_nothing(tmp_path):
    (tmp_path / "ds").mkdir()
    FilesystemDatastore(tmp_path / "ds").read_bytes  # noqa: B018  (opened, nothing written)
    assert list((tmp_path / "ds").iterdir()) == []


def test_the_tree_is_walked_at_most_once_an_hour(tmp_path):
    _write(tmp_path / "ds")
    stray = tmp_path / "ds" / "files" / ".tmp-0badc0de.1.x"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"x")
    old = time.time() - 2 * atomic.ABANDONED_AFTER_S
    os.utime(stray, (old, old))
    _write(tmp_path / "ds")
    assert stray.exists()  # swept moments ago: not walked again
    marker = tmp_path / "ds" / SWEEP_MARKER
    os.utime(marker, (old, old))
    _write(tmp_path / "ds")
    assert not stray.exists()
