"""Signals under two `swamp serve` replicas on one SeaweedFS bucket: a
wait is listed and signalled through the API (a second signal is a 409
naming the winner), and the signalled run, like a run whose wait expired,
is resumed by the replicas by themselves, exactly once."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.helpers import cli, init_repo, ok, s3_setup_args
from tests.serve.server import Serve

DEPLOY = """\
name: deploy
jobs:
  - name: main
    steps:
      - name: release
        task:
          type: wait_for_signal
          schema: {type: object, required: [version], properties: {version: {type: string}}}
      - name: ship
        dependsOn: [{step: release}]
        task:
          type: model_method
          modelIdOrName: hello
          methodName: execute
          inputs: {run: "echo shipping ${{ steps.release.signal.version }}"}
"""

EXPIRE = """\
name: expire
jobs:
  - name: main
    steps:
      - name: gate
        task: {type: wait_for_signal, timeout: 2, onTimeout: continue, default: {version: fallback}}
      - name: after
        dependsOn: [{step: gate}]
        task: {type: assert, expr: '${{ steps.gate.signal.version == "fallback" }}', message: no default}
"""


def _repos(tmp_path, n: int):
    first = init_repo(tmp_path / "r0")
    ok(first, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    (first / "workflows").mkdir(exist_ok=True)
    (first / "workflows" / "workflow-deploy.yaml").write_text(DEPLOY)
    (first / "workflows" / "workflow-expire.yaml").write_text(EXPIRE)
    repos = [first]
    for i in range(1, n):
        r = init_repo(tmp_path / f"r{i}")
        shutil.copytree(first / "models", r / "models", dirs_exist_ok=True)
        shutil.copytree(first / "workflows", r / "workflows", dirs_exist_ok=True)
        repos.append(r)
    return repos


def _wait_for(repo, name: str, run_id: str, status: str, limit_s: float = 90) -> dict:
    end = time.monotonic() + limit_s
    while True:
        run = ok(repo, "workflow", "history", "get", run_id)
        if run["status"] == status or time.monotonic() > end:
            return run
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.s3
def test_a_signalled_run_resumes_once_under_two_replicas(tmp_path, seaweedfs):
    cli_peer, r1, r2 = _repos(tmp_path, 3)
    setup = s3_setup_args(seaweedfs)
    for r in (cli_peer, r1, r2):
        ok(r, "datastore", "setup", *setup)
    replicas = [Serve(r1), Serve(r2)]
    try:
        run = ok(cli_peer, "workflow", "run", "deploy")
        assert run["status"] == "suspended"
        listed = replicas[1].get("/api/v1/signals?workflow=deploy")
        assert listed.status == 200
        assert [(w["runId"], w["step"], w["state"]) for w in listed.doc] == [(run["id"], "release", "waiting")]

        bad = replicas[0].post("/api/v1/workflows/deploy/signal", {"step": "release", "message": {"version": 1}})
        assert bad.status == 400 and "does not match its schema" in bad.error["error"]

        first = replicas[0].post("/api/v1/workflows/deploy/signal",
                                 {"step": "release", "message": {"version": "7.1"}, "runId": run["id"]})
        assert first.status == 200, first.doc
        second = replicas[1].post("/api/v1/workflows/deploy/signal",
                                  {"step": "release", "message": {"version": "9.9"}, "runId": run["id"]})
        assert second.status == 409 and "already settled: signalled by" in second.error["error"]
        remote = cli(cli_peer, "workflow", "signal", "deploy", "release", "--data", '{"version": "0.1"}',
                     "--run", run["id"], "--server", replicas[1].url)
        assert remote.code == 1 and "already settled: signalled by" in json.loads(remote.stderr)["error"]

        done = _wait_for(cli_peer, "deploy", run["id"], "succeeded")
        assert done["status"] == "succeeded", done
        expiring = ok(cli_peer, "workflow", "run", "expire")
        waits = ok(cli_peer, "workflow", "signals", "--server", replicas[0].url)
        assert [(w["runId"], w["step"]) for w in waits] in ([(expiring["id"], "gate")], [])  # [] once resumed
        expired = _wait_for(cli_peer, "expire", expiring["id"], "succeeded")
        assert expired["status"] == "succeeded", expired
        time.sleep(3)  # a few more looks by both replicas: nothing is resumed again
    finally:
        for s in replicas:
            assert s.stop() == 0
    logs = "".join(s.log.read_text() for s in replicas)
    assert logs.count(f"resumed run {run['id']}") == 1, logs
    assert logs.count(f"resumed run {expiring['id']}") == 1, logs
    ship = next(s for j in done["jobs"] for s in j["steps"] if s["name"] == "ship")
    assert ship["status"] == "succeeded"
    versions = ok(cli_peer, "data", "versions", "hello", "result")
    assert len(versions) == 1  # the step ran once
    content = ok(cli_peer, "data", "get", "hello", "result")["content"]
    assert "shipping 7.1" in json.dumps(content)
    gate = next(s for j in expired["jobs"] for s in j["steps"] if s["name"] == "gate")
    assert gate["signal"]["outcome"] == "timed_out" and gate["signal"]["message"] == {"version": "fallback"}
    late = cli(cli_peer, "workflow", "signal", "expire", "gate", "--data", "{}", "--run", expiring["id"])
    assert late.code == 1 and "already settled: timed out" in json.loads(late.stderr)["error"]
