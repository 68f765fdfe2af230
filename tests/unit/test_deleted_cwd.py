"""A shell left in a directory another process removed: swamp says so, with
a hint, instead of a traceback; an absolute --repo-dir still works there."""

from __future__ import annotations

import json
import os
import subprocess

from tests.helpers import PYTHON, _env, init_repo


def _in_removed_directory(tmp_path, *args):
    gone = tmp_path / "gone"
    gone.mkdir()
    # the child starts in the directory, which is removed before swamp runs
    script = f"import os, sys, runpy; os.rmdir({str(gone)!r}); sys.argv = ['swamp', *sys.argv[1:]]; runpy.run_module('swamp', run_name='__main__')"
    return subprocess.run([PYTHON, "-c", script, *args], cwd=gone, env=_env(), capture_output=True, text=True)


def test_a_removed_current_directory_is_a_clear_error(tmp_path):
    r = _in_removed_directory(tmp_path, "model", "list", "--json")
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr
    doc = json.loads(r.stderr)
    assert doc["code"] == "repo_not_found" and "no longer exists" in doc["error"], doc


def test_an_absolute_repo_dir_works_from_a_removed_directory(tmp_path):
    repo = init_repo(tmp_path / "repo")
    r = _in_removed_directory(tmp_path, "model", "list", "--json", "--repo-dir", str(repo))
    assert r.returncode == 0, r
    assert json.loads(r.stdout) is not None
    assert not os.path.exists(tmp_path / "gone")
