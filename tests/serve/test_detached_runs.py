"""Runs you can start and follow (issue 25, item 3): `POST .../run` with
`"wait": false` answers 202 with the run's id and a Location (a method
run's too: its record reads `running` until it ends); `swamp
workflow run --detach` (here and with --server) prints the id while the run
goes on; `workflow history get ID --follow` streams it until it ends; a
webhook's 202 and every SSE event name the run. Who may: the same as a
blocking run (a token without `run` is refused and nothing starts).

The runs wait for a file the test creates, so "at once" needs no clock."""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from swamp.serve.webhooks import signed_headers
from tests.helpers import cli, init_repo, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"
SECRET = "detached-webhook-secret"

GATED_ON_A_FILE = """
inputs:
  properties:
    gate: {type: string}
  required: [gate]
jobs:
  - name: main
    steps:
      - name: wait
        task:
          type: model_method
          modelIdOrName: hello
          methodName: execute
          inputs: {run: "while [ ! -e '${{ inputs.gate }}' ]; do sleep 0.1; done; echo through"}
"""

GRANTS = """
grants:
  - subjects: ["token:ops"]
    actions: [read, run]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:viewer"]
    actions: [read]
    resources: ["workflow:*", "model:*", "data:*"]
"""


def _repo(path):
    repo = init_repo(path)
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "gated", GATED_ON_A_FILE)
    write_workflow(repo, "quick", """
        jobs:
          - name: main
            steps:
              - {name: hi, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
    """)
    return repo


def _status(repo, run_id: str) -> str:
    got = cli(repo, "workflow", "history", "get", run_id)
    assert got.code == 0, got
    return got.data["status"]


def _wait_done(repo, run_id: str, limit_s: float = 60) -> str:
    end = time.monotonic() + limit_s
    while (status := _status(repo, run_id)) in ("running", "pending"):
        assert time.monotonic() < end, status
        time.sleep(0.3)
    return status


def test_detach_prints_the_id_while_the_run_waits_and_follow_streams_it_to_its_end(tmp_path):
    repo = _repo(tmp_path / "repo")
    gate = tmp_path / "go"
    started = cli(repo, "workflow", "run", "gated", "--detach", "--input", f"gate={gate}")
    assert started.code == 0, started
    run_id = started.data["runId"]
    assert started.data["follow"] == f"swamp workflow history get {run_id} --follow"
    assert _status(repo, run_id) == "running"  # the command returned; the run waits for the file

    gate.write_text("")
    followed = cli(repo, "workflow", "history", "get", run_id, "--follow")
    assert followed.code == 0, followed
    lines = [json.loads(line) for line in followed.stdout.splitlines()]
    assert {"runId": run_id, "job": "main", "step": "wait", "status": "succeeded"} in lines
    assert lines[-1]["id"] == run_id and lines[-1]["status"] == "succeeded"


def test_detach_refuses_what_the_run_would_refuse_before_starting_anything(tmp_path):
    repo = _repo(tmp_path / "repo")
    missing = cli(repo, "workflow", "run", "gated", "--detach")  # gate is required
    assert missing.code == 1 and missing.error["code"] == "validation", missing
    unknown = cli(repo, "workflow", "run", "nope", "--detach")
    assert unknown.code == 1 and unknown.error["code"] == "not_found", unknown
    batch = cli(repo, "workflow", "run", "quick", "--detach", "--junit", str(tmp_path / "j.xml"))
    assert batch.code == 2 and "--junit" in batch.error["error"], batch
    assert cli(repo, "workflow", "history", "gated").data == []


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = _repo(tmp_path_factory.mktemp("detached") / "repo")
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ops": mint_token(repo, "ops"), "viewer": mint_token(repo, "viewer")}
    server = Serve(repo, "--auth-mode", "token", "--webhook", "hook=quick",
                   env={"SWAMP_WEBHOOK_HOOK_SECRET": SECRET})
    yield server, tokens
    server.stop()


def test_the_api_answers_202_with_the_run_id_and_a_location(served, tmp_path):
    server, tokens = served
    gate = tmp_path / "go"
    started = server.post(f"{API}/workflows/gated/run", {"inputs": {"gate": str(gate)}, "wait": False},
                          token=tokens["ops"])
    assert started.status == 202, started.doc
    run_id = started.doc["runId"]
    location = {k.lower(): v for k, v in started.headers.items()}["location"]
    assert location == f"{API}/workflows/gated/runs/{run_id}" == started.doc["location"]
    assert server.get(location, token=tokens["ops"]).doc["status"] == "running"
    assert server.get(f"{API}/runs/{run_id}", token=tokens["ops"]).doc["id"] == run_id
    gate.write_text("")
    assert _wait_done(server.repo, run_id) == "succeeded"


def test_a_token_without_run_cannot_start_a_detached_run(served, tmp_path):
    server, tokens = served
    before = cli(server.repo, "workflow", "history", "gated").data
    refused = server.post(f"{API}/workflows/gated/run", {"inputs": {"gate": str(tmp_path / "x")}, "wait": False},
                          token=tokens["viewer"])
    assert refused.status == 403 and refused.error["code"] == "forbidden"
    assert cli(server.repo, "workflow", "history", "gated").data == before
    bad = server.post(f"{API}/workflows/gated/run", {"wait": False}, token=tokens["ops"])  # no gate input
    assert bad.status == 400 and cli(server.repo, "workflow", "history", "gated").data == before


def test_detach_and_follow_with_server(served, tmp_path):
    server, tokens = served
    gate = tmp_path / "go"
    remote = ("--server", server.url, "--token", tokens["ops"])
    started = cli(server.repo, *remote, "workflow", "run", "gated", "--detach", "--input", f"gate={gate}")
    assert started.code == 0, started
    run_id = started.data["runId"]
    gate.write_text("")
    followed = cli(server.repo, *remote, "workflow", "history", "get", run_id, "--follow", json=False)
    assert followed.code == 0, followed
    assert "main/wait succeeded" in followed.stdout and f"run {run_id} succeeded" in followed.stdout
    denied = cli(server.repo, "--server", server.url, "--token", tokens["viewer"], "workflow", "run", "gated",
                 "--detach", "--input", f"gate={gate}")
    assert denied.code == 1 and denied.error["code"] == "forbidden"


def test_every_sse_event_and_the_webhook_answer_name_the_run(served):
    server, tokens = served
    events = list(server.events(f"{API}/workflows/quick/run", {}, token=tokens["ops"]))
    ids = {data.get("runId") for _, data in events}
    assert len(ids) == 1 and None not in ids, events
    assert events[0][0] == "accepted" and events[-1][0] == "result"
    assert events[-1][1]["body"]["id"] in ids

    body = b"{}"
    hooked = server.request("POST", "/hooks/hook", raw=body,
                            headers=signed_headers(SECRET, body, webhook="hook", delivery="evt-detached-1"))
    assert hooked.status == 202 and hooked.doc["runId"], hooked.doc
    assert _wait_done(server.repo, hooked.doc["runId"]) == "succeeded"


def test_a_method_run_that_does_not_wait_answers_202_and_its_record_follows(served):
    server, tokens = served
    started = server.post(f"{API}/models/hello/methods/execute/run", {"wait": False}, token=tokens["ops"])
    assert started.status == 202, started.doc
    location = {k.lower(): v for k, v in started.headers.items()}["location"]
    assert location == f"{API}/outputs/{started.doc['id']}" == started.doc["location"]
    end = time.monotonic() + 60
    while (doc := server.get(location, token=tokens["ops"]).doc)["status"] == "running":
        assert time.monotonic() < end, doc
        time.sleep(0.2)
    assert doc["status"] == "succeeded" and doc["id"] == started.doc["id"]
    refused = server.post(f"{API}/models/hello/methods/execute/run", {"wait": False}, token=tokens["viewer"])
    assert refused.status == 403
    unknown = server.post(f"{API}/models/nope/methods/execute/run", {"wait": False}, token=tokens["ops"])
    assert unknown.status == 404, unknown.doc
