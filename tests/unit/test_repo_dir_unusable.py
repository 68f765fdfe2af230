"""A --repo-dir (or SWAMP_REPO_DIR) the system cannot even look at, such as
a name longer than the filesystem allows, is a clear error (exit 1, the
name shortened), never a traceback: through the fast lane and click alike."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli


@pytest.mark.parametrize("args", [("data", "get", "m", "result"), ("model", "search")])
def test_a_repo_dir_too_long_to_look_at_is_a_clear_error(tmp_path, args):
    too_long = str(tmp_path / ("a" * 5000))
    r = cli(None, *args, "--repo-dir", too_long, json=False, cwd=tmp_path)
    assert r.code == 1 and "Traceback" not in r.stderr
    assert "is not a usable directory" in r.stderr and len(r.stderr) < 600
    r = cli(None, *args, json=True, cwd=tmp_path, env={"SWAMP_REPO_DIR": too_long})
    assert r.code == 1 and json.loads(r.stderr)["code"] == "repo_not_found"
