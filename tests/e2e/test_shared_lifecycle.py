"""Review findings: the shared-datastore lifecycle through the `swamp`
command against a real S3 server (SeaweedFS)."""

from __future__ import annotations


import pytest

from tests.helpers import init_repo
from tests.helpers import ok, peer_from_git, run_hello, s3_setup_args

pytestmark = pytest.mark.slow


@pytest.fixture
def solo(tmp_path):
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    for i in range(3):
        run_hello(a, f"a{i}")
    return a


@pytest.mark.parametrize("move", ["prefix", "namespace"])
def test_setup_onto_a_new_remote_publishes_everything(tmp_path, seaweedfs, solo, move):
    """Moving a shared repository to a new prefix or namespace: the sync
    state of the old remote (head, bases) must not make setup believe the new
    remote already holds everything (it pushed 0 files and reported success)."""
    a = solo
    first = s3_setup_args(seaweedfs, seaweedfs.new_prefix())
    ok(a, "datastore", "setup", *first)
    again = ok(a, "datastore", "setup", *first)  # same remote: nothing to redo
    assert (again["filesPushed"], again["filesPulled"]) == (0, 0), again
    new_args = (s3_setup_args(seaweedfs, seaweedfs.new_prefix()) if move == "prefix"
                else [*first, "--namespace", "moved"])
    moved = ok(a, "datastore", "setup", *new_args)
    assert moved["filesPushed"] > 0 and moved["conflicts"] == [], moved
    assert ok(a, "datastore", "sync")["filesPushed"] == 0
    c = peer_from_git(a, tmp_path / "c")
    ok(c, "datastore", "setup", *new_args)
    assert [v["version"] for v in ok(c, "data", "versions", "hello", "result")] == [1, 2, 3]
    assert ok(c, "data", "get", "hello", "result")["content"]["stdout"] == "a2"
