"""Review findings on a local (filesystem) datastore: version numbers and
deletes, through the CLI in this process."""

from __future__ import annotations

import shutil

from tests.helpers import init_repo, invoke


def ok(repo, *args):
    r = invoke(repo, *args)
    assert r.code == 0, r
    return r.data


def test_model_delete_after_all_its_data_was_deleted_needs_no_force(tmp_path):
    """`data delete` of the highest version leaves a tombstone; that is no
    data, so `model delete` (without --force) must not refuse."""
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    ok(a, "model", "method", "run", "hello", "execute")
    ok(a, "data", "delete", "hello", "result", "-y")
    ok(a, "data", "delete", "hello", "log", "-y")
    assert ok(a, "data", "list") == []
    assert ok(a, "model", "delete", "hello", "-y")["deletedData"] == []


def test_a_definition_restored_after_model_delete_force_never_reuses_a_version(tmp_path):
    """S3: `model delete --force` then the same definition back (git
    checkout): the next version is not a number readers saw before."""
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    for i in range(2):
        ok(a, "model", "method", "run", "hello", "execute", "--input", f"run=echo {i}")
    shutil.copytree(a / "models", tmp_path / "models-backup")
    ok(a, "model", "delete", "hello", "--force", "-y")
    assert ok(a, "data", "list") == []
    shutil.copytree(tmp_path / "models-backup", a / "models", dirs_exist_ok=True)
    rec = ok(a, "model", "method", "run", "hello", "execute", "--input", "run=echo again")
    assert [x["version"] for x in rec["dataArtifacts"]] == [3, 3]
    assert ok(a, "data", "get", "hello", "result")["version"] == 3
    assert [v["version"] for v in ok(a, "data", "versions", "hello", "result")] == [3]
