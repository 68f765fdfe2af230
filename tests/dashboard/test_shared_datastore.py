"""The dashboard's datastore page on a shared datastore (SeaweedFS, started
by the fixtures): its head, the recent commits with their writer and
command, and the leases held while a run waits on one."""

from __future__ import annotations

import re

import pytest

from tests.dashboard.test_pages import fetch
from tests.helpers import init_repo
from tests.helpers import ok, s3_setup_args
from tests.serve.server import Serve

pytestmark = pytest.mark.s3


def test_the_datastore_page_shows_commits_and_the_head(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "datastore", "setup", *s3_setup_args(seaweedfs))
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    ok(repo, "model", "method", "run", "hello", "execute")
    server = Serve(repo, "--dashboard")
    try:
        assert server.run_method("hello", "execute", {"run": "echo from-serve"}).status == 200
        status, text, _ = fetch(server, "/ui/datastore")
        assert status == 200 and "s3" in text
        assert "Recent commits" in text and "no shared history" not in text
        assert "model method run hello execute" in text  # the commits' commands
        seqs = [int(s) for s in re.findall(r"<tr><td>(\d+)</td>", text)]
        assert seqs and seqs == sorted(seqs, reverse=True)  # newest first
        assert "Conflicts to resolve" in text and "no sync has kept a copy aside" in text
    finally:
        server.stop()
