"""Graceful shutdown: on SIGTERM the server stops accepting, runs in
flight finish (or, past the bound, are asked to stop), and no run is left
recorded as running."""

from __future__ import annotations

import signal
import textwrap
import threading
import time
import urllib.error

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

API = "/api/v1"

SLOW = """
name: slow
jobs:
  - name: main
    steps:
      - name: one
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "sleep 1.5"}}
      - name: two
        dependsOn: [{step: one}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "sleep 1.5"}}
"""


@pytest.fixture
def repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-slow.yaml").write_text(textwrap.dedent(SLOW).lstrip())
    return repo


def _in_background(fn):
    out: dict = {}

    def target():
        try:
            out["reply"] = fn()
        except Exception as e:  # the connection closed under it
            out["error"] = e

    t = threading.Thread(target=target)
    t.start()
    return t, out


def _wait_inflight(server: Serve) -> None:
    deadline = time.monotonic() + 20
    while server.get("/health").doc["inflight"] < 1:
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)


def test_a_run_in_flight_finishes_and_new_requests_are_refused(repo):
    server = Serve(repo, "--shutdown-timeout", "20")
    t, out = _in_background(lambda: server.run_method("hello", "execute", {"run": "sleep 1.5; echo done"}))
    _wait_inflight(server)
    server.proc.send_signal(signal.SIGTERM)
    t.join(30)
    assert out["reply"].status == 200 and out["reply"].doc["status"] == "succeeded"
    assert server.proc.wait(30) == 0
    with pytest.raises(urllib.error.URLError):
        server.get("/health", timeout=2)
    runs = cli(repo, "model", "output", "search", "hello").data
    assert [r["status"] for r in runs] == ["succeeded"]


def test_past_the_bound_a_workflow_run_is_stopped_and_recorded_never_running(repo):
    server = Serve(repo, "--shutdown-timeout", "0.5")
    t, out = _in_background(lambda: server.post(f"{API}/workflows/slow/run"))
    _wait_inflight(server)
    time.sleep(0.3)  # the run has started its first step
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(60) == 0
    t.join(30)
    history = cli(repo, "workflow", "history", "slow").data
    assert [h["status"] for h in history] == ["cancelled"]  # the first step ran; the second never started
    assert "Traceback" not in server.log.read_text()


def test_a_workflow_run_over_max_run_duration_is_stopped(repo):
    server = Serve(repo, "--max-run-duration", "0.5")
    try:
        reply = server.post(f"{API}/workflows/slow/run")
        assert reply.status == 200 and reply.doc["status"] == "cancelled"
        steps = {s["name"]: s["status"] for j in reply.doc["jobs"] for s in j["steps"]}
        # "one" was in flight past the limit: its command is stopped; "two" never runs
        assert steps["one"] == "failed" and steps["two"] != "succeeded"
        assert server.get("/health").doc["inflight"] == 0
    finally:
        server.stop()
