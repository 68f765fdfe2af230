"""A run cut short by a full disk leaves no empty or partial version
directory behind (only a tombstone keeping its number, as a delete leaves), and its record agrees with its data: a run recorded as
failed published no result (issue 16, item 15; Ctrl-C is tested in
test_concurrency_core.py)."""

from __future__ import annotations

import resource
import signal
import subprocess
from pathlib import Path

from tests.helpers import PYTHON, _env, cli, init_repo, write_type
from tests.integration.test_concurrency_core import STREAMER


def _version_contents(repo: Path, name: str) -> list[str]:
    """What the version directories of data ``name`` hold."""
    return sorted(p.name for p in (repo / ".swamp" / "data").rglob(f"{name}/*/*"))


def _repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "r")
    write_type(repo, "streamer.py", STREAMER)
    assert cli(repo, "model", "create", "acme/streamer", "s").code == 0
    return repo


def _limited_files(limit: int):
    def preexec() -> None:  # a write past `limit` bytes fails with EFBIG, as a full disk fails with ENOSPC
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_a_write_that_fails_for_space_leaves_no_version_and_fails_the_run_clearly(tmp_path):
    repo = _repo(tmp_path)
    p = subprocess.run([PYTHON, "-m", "swamp", "model", "method", "run", "s", "stream", "--json",
                        "--repo-dir", str(repo), "--input", "chunks=40", "--input", "chunk_kb=64"],
                       env=_env(), capture_output=True, text=True, timeout=60, preexec_fn=_limited_files(1 << 20))
    assert p.returncode == 1, p
    assert "Traceback" not in p.stderr and "File too large" in p.stderr + p.stdout
    assert _version_contents(repo, "big") == ["tombstone"]  # nothing half-written; the number stays taken
    history = cli(repo, "model", "method", "history", "search", "s").data
    assert [h["status"] for h in history] == ["failed"]
    done = cli(repo, "model", "method", "run", "s", "stream", "--input", "chunks=3")
    assert done.code == 0 and [v["version"] for v in cli(repo, "data", "versions", "s", "big").data] == [2]
