"""Schedules on three replicas sharing one datastore: each tick is claimed
by exactly one replica and its workflow runs once."""

from __future__ import annotations

import json
import shutil
import textwrap
import time

import pytest

from tests.helpers import init_repo
from tests.helpers import ok, s3_setup_args
from tests.serve.server import Serve

NOOP = """
name: beat
jobs:
  - name: main
    steps:
      - name: one
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo beat"}}
"""


def replica_repos(tmp_path, n: int):
    first = init_repo(tmp_path / "r0")
    ok(first, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    (first / "workflows").mkdir(exist_ok=True)
    (first / "workflows" / "workflow-beat.yaml").write_text(textwrap.dedent(NOOP).lstrip())
    repos = [first]
    for i in range(1, n):
        r = init_repo(tmp_path / f"r{i}")
        shutil.copytree(first / "models", r / "models", dirs_exist_ok=True)
        shutil.copytree(first / "workflows", r / "workflows", dirs_exist_ok=True)
        repos.append(r)
    return repos


@pytest.mark.slow
@pytest.mark.s3
def test_each_tick_fires_once_across_three_replicas(tmp_path, seaweedfs):
    repos = replica_repos(tmp_path, 3)
    setup = s3_setup_args(seaweedfs)
    for r in repos:
        ok(r, "datastore", "setup", *setup)
    replicas = [Serve(r, "--schedule", "beat=beat@*/2 * * * * *") for r in repos]
    try:
        time.sleep(5)
    finally:
        for s in replicas:
            assert s.stop() == 0
    history = ok(repos[0], "workflow", "history", "beat")  # a read pulls first
    markers = sorted((repos[0] / ".swamp" / "schedules" / "beat").glob("*.json"))
    ticks = [json.loads(m.read_text())["tick"] for m in markers]
    assert len(ticks) >= 2 and len(set(ticks)) == len(ticks)
    assert len(history) == len(ticks), (history, ticks)  # each claimed tick ran once, nothing else ran
    assert all(h["status"] == "succeeded" for h in history)
