"""`swamp run gc` deletes a workflow run's signal outcomes with its record
and its log: nothing of a collected run is left behind."""

from __future__ import annotations

from tests.helpers import cli, init_repo, ok, write_workflow

WAITING = """
jobs:
  - name: main
    steps:
      - name: wait
        task: {type: wait_for_signal, prompt: "go"}
      - name: after
        dependsOn: [{step: wait}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
"""


def test_run_gc_leaves_nothing_of_a_signalled_run(tmp_path):
    repo = init_repo(tmp_path / "r")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    write_workflow(repo, "w", WAITING)
    assert cli(repo, "workflow", "run", "w").data["status"] == "suspended"
    ok(repo, "workflow", "signal", "w", "wait", "--data", '{"a": 1}')
    assert cli(repo, "workflow", "resume", "w").data["status"] == "succeeded"
    runs = repo / ".swamp" / "workflow-runs"
    assert any("signals" in str(p) for p in runs.rglob("*.json"))
    done = ok(repo, "run", "gc", "--keep", "0")
    assert done["runs"] == 2  # the workflow run and its step's method run
    assert not runs.exists() or [p for p in runs.rglob("*") if p.is_file()] == []
