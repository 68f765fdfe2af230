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


def test_a_data_delete_killed_half_way_is_finished_by_a_rerun(tmp_path, monkeypatch):
    """S6: `data delete` of the highest version writes the tombstone, then
    removes metadata.yaml, then raw. Killed between the two, the version is
    no longer visible, so no command could remove the orphaned raw (it stays,
    and on a shared datastore it is synced to every peer)."""
    from swamp.datastore.base import Datastore

    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    for i in range(2):
        ok(a, "model", "method", "run", "hello", "execute", "--input", f"run=echo {i}")
    real = Datastore.delete

    class Killed(BaseException):
        pass

    def dying(self, rel):
        if rel.endswith("/raw"):
            raise Killed()  # as kill -9 between the two deletes
        return real(self, rel)

    monkeypatch.setattr(Datastore, "delete", dying)
    try:
        invoke(a, "data", "delete", "hello", "result", "--version", "2", "-y")
    except Killed:
        pass
    monkeypatch.setattr(Datastore, "delete", real)
    assert [v["version"] for v in ok(a, "data", "versions", "hello", "result")] == [1]
    ok(a, "data", "delete", "hello", "result", "-y")
    left = sorted(str(p.relative_to(a / ".swamp" / "data")) for p in (a / ".swamp" / "data").rglob("*")
                  if p.is_file() and "/result/" in str(p))
    assert all(p.endswith("/tombstone") for p in left), left
