"""data rename (numbers kept, the old name forwards), data prune (by age
or count, with --dry-run; the newest version always stays; orphans), and
data get --workflow (issue 14 item 13)."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, snapshot


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    assert cli(r, "model", "create", "command/shell", "sh", "--global-arg", "run=echo hi").code == 0
    return r


def _run(repo, n=1):
    for _ in range(n):
        assert cli(repo, "model", "method", "run", "sh", "execute").code == 0


def test_rename_keeps_numbers_and_forwards(repo):
    _run(repo, 3)
    r = cli(repo, "data", "rename", "sh", "result", "answer")
    assert r.code == 0 and r.data["versions"] == [1, 2, 3]
    assert [v["version"] for v in cli(repo, "data", "versions", "sh", "answer").data] == [1, 2, 3]
    old = cli(repo, "data", "get", "sh", "result").data  # forwards to the new name
    assert old["name"] == "answer" and old["version"] == 3 and old["content"]["stdout"] == "hi"
    assert cli(repo, "data", "get", "sh", "result", "--version", "2").data["name"] == "answer"
    names = [row["name"] for row in cli(repo, "data", "list", "sh").data]
    assert names == ["answer", "log"]
    before = snapshot(repo)
    taken = cli(repo, "data", "rename", "sh", "answer", "log")
    assert taken.code == 1 and taken.error["code"] == "conflict"
    assert cli(repo, "data", "rename", "sh", "nothing", "x").error["code"] == "not_found"
    assert snapshot(repo) == before


def test_prune_by_count_and_age_with_dry_run(repo):
    _run(repo, 4)
    before = snapshot(repo)
    dry = cli(repo, "data", "prune", "sh", "result", "--keep", "2", "--dry-run").data
    assert dry == {"dryRun": True, "deleted": [{"model": "sh", "name": "result", "version": 1},
                                               {"model": "sh", "name": "result", "version": 2}]}
    assert snapshot(repo) == before
    assert cli(repo, "data", "prune", "--older-than", "1h", "--dry-run").data["deleted"] == []
    assert cli(repo, "data", "prune", "sh", "--keep", "1", "-y").code == 0
    assert [v["version"] for v in cli(repo, "data", "versions", "sh", "result").data] == [4]
    assert [v["version"] for v in cli(repo, "data", "versions", "sh", "log").data] == [4]
    assert cli(repo, "data", "prune", "--dry-run").code == 2  # nothing said what to prune
    assert cli(repo, "data", "prune", "--older-than", "soon").code in (1, 2)


def test_prune_orphans(repo):
    _run(repo)
    (repo / "models" / "command" / "shell" / "sh.yaml").unlink()  # the definition is gone, its data stays
    gone = cli(repo, "data", "prune", "--orphans", "-y").data["deleted"]
    assert sorted(g["name"] for g in gone) == ["log", "result"]


def test_get_by_workflow_or_run(repo):
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-w.yaml").write_text(
        "name: w\njobs:\n  - name: j\n    steps:\n      - name: s\n"
        "        task: {type: model_method, modelIdOrName: sh, methodName: execute}\n")
    run = cli(repo, "workflow", "run", "w").data
    _run(repo)  # a later direct run: version 2
    by_name = cli(repo, "data", "get", "sh", "result", "--workflow", "w").data
    by_run = cli(repo, "data", "get", "sh", "result", "--workflow", run["id"][:8]).data
    assert by_name["version"] == by_run["version"] == 1
    assert by_run["tags"]["workflowRunId"] == run["id"]
    none = cli(repo, "data", "get", "sh", "result", "--workflow", "other")
    assert none.code == 1 and none.error["code"] == "not_found"
