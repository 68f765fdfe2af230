"""trigger.schedule in a workflow file, on three replicas sharing
SeaweedFS: each tick runs once; `swamp workflow trigger remove` from a CLI
peer stops it on every replica within seconds, `trigger set` starts it
again with inputs."""

from __future__ import annotations

import json
import shutil
import textwrap
import time

import pytest

from tests.helpers import cli, init_repo, ok, s3_setup_args
from tests.serve.server import Serve

BEAT = """
name: beat
trigger:
  schedule: "*/2 * * * * *"
inputs:
  properties:
    word: {type: string, default: file}
jobs:
  - name: main
    steps:
      - name: one
        task: {type: model_method, modelIdOrName: hello, methodName: execute,
               inputs: {run: "echo ${{ inputs.word }}"}}
"""


def _ticks(repo):
    ok(repo, "workflow", "history", "beat")  # a read pulls first
    return sorted(json.loads(m.read_text())["tick"]
                  for m in (repo / ".swamp" / "schedules" / "trigger-beat").glob("*.json"))


@pytest.mark.slow
@pytest.mark.s3
def test_a_workflows_trigger_fires_once_per_tick_and_follows_trigger_set_and_remove(tmp_path, seaweedfs):
    first = init_repo(tmp_path / "r0")
    ok(first, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    (first / "workflows").mkdir(exist_ok=True)
    (first / "workflows" / "workflow-beat.yaml").write_text(textwrap.dedent(BEAT).lstrip())
    repos = [first]
    for i in (1, 2):
        r = init_repo(tmp_path / f"r{i}")
        shutil.copytree(first / "models", r / "models", dirs_exist_ok=True)
        shutil.copytree(first / "workflows", r / "workflows", dirs_exist_ok=True)
        repos.append(r)
    setup = s3_setup_args(seaweedfs)
    for r in repos:
        ok(r, "datastore", "setup", *setup)
    assert ok(first, "workflow", "trigger", "get", "beat")["source"] == "file"
    bad = cli(first, "workflow", "trigger", "set", "beat", "--schedule", "61 * * * *")
    assert bad.code == 1 and "outside 0-59" in bad.stderr

    replicas = [Serve(r, env={"SWAMP_SERVE_TRIGGER_REFRESH_S": "1"}) for r in repos]
    try:
        time.sleep(5)
        off = ok(first, "workflow", "trigger", "remove", "beat")
        assert off["schedule"] is None and off["source"] == "set"
        time.sleep(4)  # every replica has read it (1 s) and pulled it
        stopped = _ticks(repos[1])
        time.sleep(4)
        assert _ticks(repos[2]) == stopped  # no tick since, on any replica
        ok(repos[2], "workflow", "trigger", "set", "beat", "--schedule", "*/2 * * * * *", "--input", "word=set")
        time.sleep(5)
    finally:
        for s in replicas:
            assert s.stop() == 0
    ticks = _ticks(repos[1])
    assert len(stopped) >= 2 and len(ticks) >= len(stopped) + 1
    assert len(set(ticks)) == len(ticks)
    history = ok(repos[1], "workflow", "history", "beat")
    assert len(history) == len(ticks), (history, ticks)  # each tick ran once, on one replica
    assert all(h["status"] == "succeeded" for h in history)
    data = ok(repos[1], "data", "get", "hello", "result")
    assert data["content"]["stdout"] == "set"  # the newest run had the inputs of 'trigger set'
