"""Placed steps on real Dask workers (separate processes on 127.0.0.1),
each a peer of one SeaweedFS datastore."""

from __future__ import annotations

import hashlib
import os
import signal
import time

import pytest

from tests.helpers import cli, popen
from tests.helpers import ok
from tests.workers.cluster import dump
from tests.workers.conftest import SECRET

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _steps(run: dict) -> list[dict]:
    return [s for j in run["jobs"] for s in j["steps"]]


def test_worker_list_shows_the_workers_and_their_labels(cluster):
    rows = {r["name"]: r for r in cluster.list()}
    assert rows["eu-1"]["labels"] == {"region": "eu"}
    assert rows["us-1"]["labels"] == {"region": "us"}
    assert rows["eu-1"]["concurrency"] == 2


def test_each_placed_step_runs_on_a_worker_with_its_label_and_every_peer_sees_the_same_data(cluster):
    run = cluster.run("spread")
    assert run["status"] == "succeeded", run
    steps = _steps(run)
    assert len(steps) == 4
    for s in steps:
        region = s["name"].split("-")[1]
        assert s["worker"] == f"{region}-1", s  # the run record says which worker ran it
        assert s["outputId"]
    peers = [cluster.origin] + [w.repo for w in cluster.workers.values()]
    seen = []
    for peer in peers:
        versions = ok(peer, "data", "versions", "hello", "result")
        contents = sorted(ok(peer, "data", "get", "hello", "result", "--version", str(v["version"]))
                          ["content"]["stdout"].strip() for v in versions)
        seen.append((sorted(v["version"] for v in versions), contents))
    assert seen[0] == ([1, 2, 3, 4], ["eu-1", "eu-2", "us-1", "us-2"])
    assert all(dump(s) == dump(seen[0]) for s in seen[1:])


def test_a_step_with_no_matching_worker_fails_when_its_queue_timeout_runs_out(cluster):
    run = cluster.run("nowhere")
    assert run["status"] == "failed"
    (step,) = _steps(run)
    assert "no worker with region=mars" in step["error"] and "queueTimeout" in step["error"]


def test_unplaced_steps_are_refused_with_remote_only(cluster, tmp_path):
    wf = cluster.origin / "workflows" / "workflow-local.yaml"
    wf.write_text("name: local\njobs:\n  - name: j\n    steps:\n"
                  "      - {name: here, task: {type: model_method, modelIdOrName: hello, methodName: execute}}\n")
    try:
        run = cluster.run("local", "--remote-only")
    finally:
        wf.unlink()
    assert run["status"] == "failed"
    assert "--remote-only" in _steps(run)[0]["error"]


def test_a_worker_killed_mid_step_fails_the_step_and_publishes_nothing(cluster):
    doomed = cluster.start_worker("doomed-1", "region=doomed", concurrency=1)
    proc = popen(cluster.origin, "workflow", "run", "doomed", *cluster.link)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            rows = {r["name"]: r for r in cluster.list()}
            if rows.get("doomed-1", {}).get("running"):
                break
            time.sleep(0.3)
        else:
            pytest.fail("the step never started on the worker")
        assert rows["doomed-1"]["running"] == ["doomed: slow"]  # what `worker list` says it runs
        time.sleep(1.0)  # inside the method: its lease taken, its version allocated
        os.kill(doomed.proc.pid, signal.SIGKILL)
        doomed.proc.wait()  # reaped: a zombie would still look alive to the lease's dead-holder check
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    import json

    run = json.loads(out)
    assert run["status"] == "failed", (out, err)
    (step,) = _steps(run)
    assert step["error"].startswith("worker lost"), step
    # Nothing half-written anywhere: no version of `slow` on any live peer.
    for peer in [cluster.origin, cluster.workers["eu-1"].repo]:
        r = cli(peer, "data", "versions", "slow", "result")
        assert r.code != 0 or r.data == [], r
    # The next run takes the dead worker's lease over and writes version 1.
    ok(cluster.origin, "model", "method", "run", "slow", "execute", "--input", "run=echo after")
    assert [v["version"] for v in ok(cluster.origin, "data", "versions", "slow", "result")] == [1]


def test_a_vault_secret_reaches_the_remote_step_and_is_never_written_in_clear(cluster):
    run = cluster.run("secret")
    assert run["status"] == "succeeded", run
    (step,) = _steps(run)
    assert step["worker"] == "us-1"
    got = ok(cluster.origin, "data", "get", "secretive", "result")["content"]["stdout"].strip()
    assert got == hashlib.sha256(SECRET.encode()).hexdigest()  # the right value arrived
    logs = ok(cluster.origin, "workflow", "logs", "secret")
    assert SECRET not in dump(run) and SECRET not in dump(logs)
    worker = cluster.workers["us-1"]
    assert _files_containing(worker.repo, SECRET) == []
    assert SECRET not in worker.log.read_text(errors="replace")
    assert SECRET not in cluster.log.read_text(errors="replace")  # the scheduler's log


def _files_containing(root, needle: str) -> list[str]:
    hits = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                with open(p, "rb") as fh:
                    if needle.encode() in fh.read():
                        hits.append(p)
            except OSError:
                pass
    return hits


def test_a_method_run_with_placement_runs_on_a_worker_with_that_label(cluster):
    got = ok(cluster.origin, "model", "method", "run", "hello", "execute", "--input", "run=echo placed",
             "--placement", "region=eu", *cluster.link)
    assert got["status"] == "succeeded" and got["worker"] == "eu-1"
    latest = ok(cluster.workers["us-1"].repo, "data", "get", "hello", "result")
    assert latest["content"]["stdout"].strip() == "placed"  # published: another peer sees it


def test_serve_with_a_scheduler_dispatches_placed_steps(cluster):
    from tests.fixtures.servers import stop_processes
    from tests.serve.server import Serve

    server = Serve(cluster.origin, *cluster.link)
    try:
        reply = server.post("/api/v1/workflows/secret/run", {"inputs": {}})
    finally:
        stop_processes([server.proc])
    assert reply.status == 200, reply
    (step,) = [s for j in reply.doc["jobs"] for s in j["steps"]]
    assert step["status"] == "succeeded" and step["worker"] == "us-1"
    # the worker records the method run for whoever the run acts for (the server's caller), not for itself
    record = ok(cluster.origin, "model", "method", "history", "get", step["outputId"])
    assert record["initiatedBy"] == reply.doc["initiatedBy"]


def _placed_workflow(cluster, name: str, step: str) -> None:
    (cluster.origin / "workflows" / f"workflow-{name}.yaml").write_text(
        f"name: {name}\njobs:\n  - name: j\n    steps:\n      - {step}\n")


def test_a_placed_step_is_retried_and_only_its_last_attempt_publishes(cluster):
    count = cluster.root / "placed-retry.count"
    _placed_workflow(cluster, "placed-retry",
                     "{name: flaky, retries: 1, placement: {labels: {region: eu}, queueTimeout: 20}, "
                     "task: {type: model_method, modelIdOrName: hello, methodName: execute, "
                     f"inputs: {{run: 'echo x >> {count}; test $(wc -l < {count}) -ge 2'}}}}}}")
    before = len(ok(cluster.origin, "data", "versions", "hello", "result"))
    run = cluster.run("placed-retry")
    assert run["status"] == "succeeded", run
    (step,) = _steps(run)
    assert [a["status"] for a in step["attempts"]] == ["failed", "succeeded"] and step["worker"] == "eu-1"
    assert len(count.read_text().splitlines()) == 2
    assert len(ok(cluster.origin, "data", "versions", "hello", "result")) == before + 1


def test_a_placed_step_that_runs_out_of_time_is_stopped_on_its_worker(cluster):
    _placed_workflow(cluster, "placed-timeout",
                     "{name: slow, timeout: 1, placement: {labels: {region: us}, queueTimeout: 20}, "
                     "task: {type: model_method, modelIdOrName: hello, methodName: execute, "
                     "inputs: {run: 'sleep 20'}}}")
    before = ok(cluster.origin, "data", "versions", "hello", "result")
    run = cluster.run("placed-timeout")
    assert run["status"] == "failed", run
    (step,) = _steps(run)
    assert step["error"] == "timed out after 1 s", step
    assert ok(cluster.origin, "data", "versions", "hello", "result") == before  # nothing of it published
