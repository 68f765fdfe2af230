"""A replica killed mid-run (kill -9) on three replicas sharing SeaweedFS:
a peer records its run as interrupted, with the reason, and the schedule
keeps firing once per tick on the replicas left."""

from __future__ import annotations

import json
import shutil
import textwrap
import threading
import time
from datetime import datetime, timezone

import pytest

from tests.helpers import ok, s3_setup_args
from tests.serve.server import Serve
from tests.serve.test_schedules import replica_repos

SLOW = """
name: slow
jobs:
  - name: main
    steps:
      - name: wait
        task: {type: model_method, modelIdOrName: sleeper, methodName: execute, inputs: {run: "sleep 20"}}
"""


def _wait(what: str, check, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
@pytest.mark.s3
def test_a_killed_replicas_run_is_marked_interrupted_and_schedules_go_on(tmp_path, seaweedfs):
    repos = replica_repos(tmp_path, 3)
    # Its own model: the schedule's runs never wait for the slow one's lease.
    ok(repos[0], "model", "create", "command/shell", "sleeper", "--global-arg", "run=sleep 1")
    setup = s3_setup_args(seaweedfs)  # one bucket prefix for all
    for r in repos:
        if r != repos[0]:
            shutil.copytree(repos[0] / "models", r / "models", dirs_exist_ok=True)
        (r / "workflows" / "workflow-slow.yaml").write_text(textwrap.dedent(SLOW).lstrip())
        ok(r, "datastore", "setup", *setup)
    env = {"SWAMP_SERVE_REAP_S": "1"}
    replicas = [Serve(r, "--schedule", "beat=beat@*/2 * * * * *", env=env) for r in repos]
    victim, peers = replicas[0], replicas[1:]
    try:
        # A run on the victim (its answer never comes: the victim dies).
        answer: list = []

        def post():
            try:
                answer.append(victim.post("/api/v1/workflows/slow/run", {}, timeout=60))
            except OSError:
                pass  # the victim died before answering: expected

        threading.Thread(target=post, daemon=True).start()

        def started():
            assert not answer, json.dumps(answer[0].doc)  # the run answers only once it ended
            return [r for r in peers[0].get("/api/v1/workflows/slow/runs").doc if r["status"] == "running"]

        run_id = _wait("the slow run to be running, seen by a peer", started)[0]["id"]
        time.sleep(1)  # its step is running (sleep 20)
        victim.proc.kill()  # SIGKILL: no shutdown, its leases stay behind without heartbeat
        victim.proc.wait()
        killed_at = datetime.now(timezone.utc)

        def marked():
            doc = peers[1].get(f"/api/v1/workflows/slow/runs/{run_id}").doc
            return doc if doc["status"] != "running" else None

        record = _wait("a peer to mark the run interrupted", marked)
        assert record["status"] == "interrupted"
        assert record["failureReason"].startswith("interrupted: the process running it")
        assert "exited without finishing it" in record["failureReason"]
        assert record["completedAt"]
        log = peers[0].get(f"/api/v1/workflows/slow/runs/{run_id}/log").doc["log"]
        assert "interrupted" in log
        time.sleep(6)  # three ticks more, on the two replicas left
    finally:
        for s in peers:
            assert s.stop() == 0
    history = ok(repos[1], "workflow", "history", "beat")  # a read pulls first: every marker is here
    markers = sorted((repos[1] / ".swamp" / "schedules" / "beat").glob("*.json"))
    ticks = [json.loads(m.read_text()) for m in markers]
    assert len({t["tick"] for t in ticks}) == len(ticks)
    after = [t for t in ticks if datetime.fromisoformat(t["claimedAt"].replace("Z", "+00:00")) > killed_at]
    assert len(after) >= 2 and not any(t["by"].endswith(f":{victim.proc.pid}") for t in after)
    # Each tick ran once: one run per marker (a tick the victim claimed as it died may have no run).
    assert len(ticks) - 1 <= len(history) <= len(ticks), (history, ticks)
    assert len([h for h in history if h["status"] == "succeeded"]) >= len(after)


def test_a_server_restarted_after_kill_9_records_its_old_run_as_interrupted(tmp_path):
    """One server on a directory datastore, killed mid-run and started again:
    the new process finds the run whose holder is gone and records it."""
    from tests.helpers import init_repo

    repo = init_repo(tmp_path / "repo")
    ok(repo, "model", "create", "command/shell", "sleeper", "--global-arg", "run=sleep 1")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-slow.yaml").write_text(textwrap.dedent(SLOW).lstrip())
    env = {"SWAMP_SERVE_REAP_S": "1"}
    first = Serve(repo, env=env)

    def post():
        try:
            first.post("/api/v1/workflows/slow/run", {}, timeout=60)
        except OSError:
            pass  # killed before answering: expected

    threading.Thread(target=post, daemon=True).start()
    run_id = _wait("the run to start", lambda: [r for r in ok(repo, "workflow", "history", "slow")
                                                 if r["status"] == "running"])[0]["id"]
    first.proc.kill()
    first.proc.wait()
    again = Serve(repo, env=env)
    try:
        record = _wait("the new server to record the run", lambda: (
            lambda d: d if d["status"] != "running" else None)(again.get(f"/api/v1/workflows/slow/runs/{run_id}").doc))
        assert record["status"] == "interrupted" and "exited without finishing it" in record["failureReason"]
    finally:
        assert again.stop() == 0
