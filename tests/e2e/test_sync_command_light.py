"""`swamp datastore sync` is a command a user waits for on every pull: it
runs through the fast lane and loads neither click nor pydantic (100 ms of
a 20 x 8 MiB pull that rclone copies in 350 ms: bench/cli_transfer_bench.py).
Checked on a real pull of a peer's commit, from python's own import log."""

from __future__ import annotations

import re

import pytest

from tests import fork_client
from tests.helpers import cli, init_repo, ok, peer_from_git, s3_setup_args

pytestmark = [pytest.mark.s3]


def _loaded(stderr: str) -> set[str]:
    return {m.group(1).split(".")[0] for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", stderr, re.M)}


def test_a_pull_that_brings_a_peers_files_loads_neither_click_nor_pydantic(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(a, "datastore", "setup", *setup)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *setup)
    ok(a, "model", "method", "run", "hello", "execute")

    pull = cli(b, "datastore", "sync", "--pull", env={"PYTHONPROFILEIMPORTTIME": "1", fork_client.FRESH_PROCESS: "1"})
    assert pull.code == 0, pull
    assert pull.data["filesPulled"] > 0  # the peer's run came down
    loaded = _loaded(pull.stderr)
    assert "swamp" in loaded  # the import log is there at all
    assert not loaded & {"click", "pydantic", "pydantic_core"}, sorted(loaded & {"click", "pydantic"})
