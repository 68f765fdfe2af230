"""Review finding: in --json mode, stderr carries only the JSON error
document; warnings logged by the sync engine (Python's last-resort logging
handler prints them as plain text on stderr) break that, and print even
when the command succeeds."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo

pytestmark = pytest.mark.slow


def test_json_mode_keeps_stderr_clean_of_engine_warnings(tmp_path, seaweedfs):
    args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
            "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1"]
    a = init_repo(tmp_path / "a")
    # A file whose name cannot be synced (a backslash): the engine skips it
    # with a warning.
    odd = a / ".swamp" / "config" / "odd\\name"
    odd.parent.mkdir(parents=True, exist_ok=True)
    odd.write_text("x")
    r = cli(a, "datastore", "setup", *args)
    assert r.code == 0, r
    assert r.stderr == "", r
    # An error: exactly one JSON document on stderr.
    r = cli(a, "data", "get", "nope", "nothing")
    assert r.code == 1 and r.error["code"] == "not_found", r


def test_human_mode_shows_engine_warnings_as_warning_lines(tmp_path, seaweedfs):
    args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
            "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1"]
    a = init_repo(tmp_path / "a")
    odd = a / ".swamp" / "config" / "odd\\name"
    odd.parent.mkdir(parents=True, exist_ok=True)
    odd.write_text("x")
    r = cli(a, "datastore", "setup", *args, json=False)
    assert r.code == 0, r
    assert r.stderr.startswith("warning: not syncing"), r
