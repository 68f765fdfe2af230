"""Workflows on a shared datastore, through the `swamp` command: each
model_method step is one session (one commit carrying what the step wrote
and the run record that says so), and a cancel from another peer reaches a
running workflow while its step is still in flight."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo, popen
from tests.helpers import ok, peer_from_git, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]

SEQUENTIAL = """\
name: seq
jobs:
  - name: j
    steps:
      - {name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
      - name: s2
        dependsOn: [{step: s1}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
      - name: s3
        dependsOn: [{step: s2}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
"""


def _shared_repo(path: Path, setup_args: list[str], run: str) -> Path:
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", f"run={run}")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-seq.yaml").write_text(SEQUENTIAL)
    ok(repo, "datastore", "setup", *setup_args)
    return repo


def test_each_step_is_one_commit_with_its_data_and_the_run_record(tmp_path, seaweedfs):
    repo = _shared_repo(tmp_path / "a", s3_setup_args(seaweedfs), "echo hi")
    before = ok(repo, "datastore", "log")
    run = ok(repo, "workflow", "run", "seq")
    assert run["status"] == "succeeded"
    assert run["sync"]["filesPushed"] > 0  # a shared datastore's run reports what it moved

    commits = [c for c in ok(repo, "datastore", "log") if c["seq"] > max((c["seq"] for c in before), default=0)]
    by_step = {}
    for c in commits:
        for step in ("s1", "s2", "s3"):
            if c["command"].endswith(f"j/{step}"):
                by_step.setdefault(step, []).append(c)
    assert sorted(by_step) == ["s1", "s2", "s3"]
    record = f"workflow-runs/{run['workflowId']}/workflow-run-{run['id']}"
    for step, found in by_step.items():
        assert len(found) == 1, f"step {step} made {len(found)} commits"
        paths = [ch["path"] for ch in found[0]["changes"]]
        assert any(p.startswith("data/") and p.endswith("/raw") for p in paths), paths
        assert any(p.startswith(record) for p in paths), paths  # the run record, in the same commit
    # Besides the steps: the run's start. Its end goes out with the last
    # step (app/one_lane_runs.py): nothing comes after s3's commit.
    assert len(commits) == 3 + 1
    assert commits[0]["command"].endswith("j/s3"), [c["command"] for c in commits]


def test_a_cancel_from_another_peer_stops_the_run_while_a_step_is_in_flight(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = _shared_repo(tmp_path / "a", setup, "true")
    # s1 stays in flight long enough for the other peer to see the run and cancel it.
    seq = a / "workflows" / "workflow-seq.yaml"
    seq.write_text(seq.read_text().replace(
        "{name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute}}",
        "{name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute, "
        "inputs: {run: 'sleep 8'}}}"))
    b = peer_from_git(a, tmp_path / "b")
    shutil.copytree(a / "workflows", b / "workflows", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *setup)

    runner = popen(a, "workflow", "run", "seq")
    try:
        run_id = _wait_for_running_run(b)
        cancel = ok(b, "workflow", "cancel", "seq", "--run", run_id)
        assert cancel["cancelRequested"] is True
        out, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 1, err
    record = json.loads(out)
    statuses = {s["name"]: s["status"] for j in record["jobs"] for s in j["steps"]}
    # s1 was in flight: the request is seen while it runs, its command is
    # stopped (tests/e2e/test_workflow_cancel_local.py), and s2 never starts.
    assert record["status"] == "cancelled"
    assert statuses == {"s1": "failed", "s2": "pending", "s3": "pending"}


def _wait_for_running_run(repo: Path) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = cli(repo, "workflow", "history", "seq")
        if r.code == 0:
            running = [h for h in r.data if h["status"] == "running"]
            if running:
                return running[0]["id"]
        time.sleep(0.3)
    raise AssertionError("the run never showed as running on the other peer")
