"""workflow resume --from STEP (issue 14 item 21): a failed run restarts
from a step; it and what depends on it run again, the steps before keep
their outcome, the run's inputs are kept (and --input merges over them)."""

from __future__ import annotations

from tests.helpers import cli, init_repo

WORKFLOW = """\
name: flaky
inputs:
  properties:
    word: {type: string}
  required: [word]
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: ok, methodName: execute}
      - name: flaky
        dependsOn: [{step: first}]
        task: {type: model_method, modelIdOrName: check, methodName: execute}
      - name: after
        dependsOn: [{step: flaky}]
        task:
          type: assert
          expr: "${{ inputs.word == 'again' }}"
          message: "word is ${{ inputs.word }}"
"""


def test_resume_from_a_failed_step(tmp_path):
    repo = init_repo(tmp_path / "r")
    flag = tmp_path / "flag"
    assert cli(repo, "model", "create", "command/shell", "ok", "--global-arg", "run=echo ok").code == 0
    assert cli(repo, "model", "create", "command/shell", "check", "--global-arg", f"run=test -f {flag}").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-flaky.yaml").write_text(WORKFLOW)
    first = cli(repo, "workflow", "run", "flaky", "--input", "word=once")
    assert first.code == 1 and first.data["status"] == "failed"
    steps = {s["name"]: s for s in first.data["jobs"][0]["steps"]}
    assert steps["flaky"]["status"] == "failed" and steps["after"]["status"] == "skipped"
    bad = cli(repo, "workflow", "resume", "flaky", "--from", "flakey")
    assert bad.code == 1 and "did you mean 'flaky'" in bad.error["hint"]
    flag.write_text("")
    again = cli(repo, "workflow", "resume", "flaky", "--from", "flaky", "--input", "word=again")
    assert again.code == 0, again
    assert again.data["id"] == first.data["id"] and again.data["status"] == "succeeded"
    after = {s["name"]: s for s in again.data["jobs"][0]["steps"]}
    assert after["first"]["outputId"] == steps["first"]["outputId"]  # not run again
    assert after["flaky"]["status"] == after["after"]["status"] == "succeeded"
    assert [v["version"] for v in cli(repo, "data", "versions", "ok", "result").data] == [1]
    done = cli(repo, "workflow", "resume", "flaky", "--from", "flaky", "--run", first.data["id"])
    assert done.code == 1 and done.error["code"] == "conflict"  # a succeeded run is not restarted
