"""Who did it, through a real `swamp serve` (issue 23, item 8): a run, an
approval, a signal, a resume and a cancel over the API record the calling
token (and the user it was minted for), never the server's own user; the
dashboard's forms act as the logged-in token and its pages show who; a
token that may not approve or cancel changes nothing and is recorded
nowhere. Schedules and webhooks have their own file (test_identity_triggers.py)."""

from __future__ import annotations

import textwrap
import time

import pytest

from tests.dashboard.http import Session, text_of
from tests.helpers import cli, init_repo, popen, run_record, wait_for_run_status, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GRANTS = """
grants:
  - subjects: ["group:ops"]
    actions: [read, run, approve]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:viewer"]
    actions: [read]
    resources: ["workflow:*", "model:*", "data:*"]
"""

GATED = """
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo first"}}
      - name: gate
        dependsOn: [{step: first}]
        task: {type: manual_approval, prompt: "go on?"}
      - name: last
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo last"}}
"""

SIGNALLED = """
jobs:
  - name: main
    steps:
      - name: release
        task: {type: wait_for_signal, schema: {type: object, properties: {version: {type: string}}}}
"""

SLOW = """
jobs:
  - name: main
    steps:
      - name: nap
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "sleep 60"}}
"""

ALICE = "token:ci (user:alice)"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("identity") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "gated", GATED)
    write_workflow(repo, "signalled", SIGNALLED)
    write_workflow(repo, "slow", SLOW)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ci": mint_token(repo, "ci", "--user", "alice", "--group", "ops"),
              "approver": mint_token(repo, "approver", "--group", "ops"),
              "viewer": mint_token(repo, "viewer")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield server, tokens
    server.stop()


def _output(repo, output_id: str) -> dict:
    got = cli(repo, "model", "method", "history", "get", output_id)
    assert got.code == 0, got
    return got.data


def test_a_method_run_over_the_api_records_the_token_and_its_user(served):
    server, tokens = served
    r = server.run_method("hello", "execute", token=tokens["ci"])
    assert r.status == 200 and r.doc["initiatedBy"] == ALICE, r.doc
    stored = _output(server.repo, r.doc["id"])
    assert stored["initiatedBy"] == ALICE  # what `model method history get` shows
    plain = server.run_method("hello", "execute", token=tokens["approver"])
    assert _output(server.repo, plain.doc["id"])["initiatedBy"] == "token:approver"  # a token with no user
    # a token that may only read runs nothing, and no record names it
    refused = server.run_method("hello", "execute", token=tokens["viewer"])
    assert refused.status == 403 and refused.error["code"] == "forbidden"
    rows = cli(server.repo, "run", "history", "--kind", "method").data
    assert "token:viewer" not in {row["initiatedBy"] for row in rows}
    assert {ALICE, "token:approver"} <= {row["initiatedBy"] for row in rows}


def test_a_run_its_approval_and_its_resume_each_record_their_own_token(served):
    server, tokens = served
    started = server.post(f"{API}/workflows/gated/run", {}, token=tokens["ci"])
    assert started.status == 200 and started.doc["status"] == "suspended", started.doc
    run_id = started.doc["id"]
    assert started.doc["initiatedBy"] == ALICE
    first = next(s for j in started.doc["jobs"] for s in j["steps"] if s["name"] == "first")
    assert _output(server.repo, first["outputId"])["initiatedBy"] == ALICE  # its step acted for the token

    # someone who may not approve: refused, and the gate still waits for a decision
    denied = server.post(f"{API}/workflows/gated/approve", {"step": "gate", "runId": run_id},
                         token=tokens["viewer"])
    assert denied.status == 403 and denied.error["code"] == "forbidden"
    gate = next(s for j in run_record(server.repo, run_id)["jobs"] for s in j["steps"] if s["name"] == "gate")
    assert "decision" not in gate["approval"]

    decided = server.post(f"{API}/workflows/gated/approve", {"step": "gate", "runId": run_id, "reason": "ok"},
                          token=tokens["approver"])
    assert decided.status == 200 and decided.doc["decidedBy"] == "token:approver", decided.doc
    assert decided.doc["resumed"] is True  # the server continues it, as the approver
    doc = wait_for_run_status(server.repo, run_id, ("succeeded", "failed"))  # `workflow history get`
    assert doc["status"] == "succeeded", doc
    assert doc["initiatedBy"] == ALICE and doc["resumedBy"] == "token:approver"
    steps = {s["name"]: s for j in doc["jobs"] for s in j["steps"]}
    assert steps["gate"]["approval"]["decidedBy"] == "token:approver"
    assert _output(server.repo, steps["last"]["outputId"])["initiatedBy"] == "token:approver"
    listed = cli(server.repo, "workflow", "history", "gated").data
    assert next(r for r in listed if r["id"] == run_id)["initiatedBy"] == ALICE


def test_a_signal_over_the_api_records_the_token(served):
    server, tokens = served
    started = server.post(f"{API}/workflows/signalled/run", {}, token=tokens["ci"])
    run_id = started.doc["id"]
    assert started.doc["status"] == "suspended", started.doc
    denied = server.post(f"{API}/workflows/signalled/signal", {"step": "release", "message": {"version": "x"},
                                                              "runId": run_id}, token=tokens["viewer"])
    assert denied.status == 403
    sent = server.post(f"{API}/workflows/signalled/signal", {"step": "release", "message": {"version": "1.2"},
                                                            "runId": run_id}, token=tokens["approver"])
    assert sent.status == 200 and sent.doc["by"] == "token:approver", sent.doc
    # the server continues the run by itself: for whoever started it, the signal's sender recorded in the step
    doc = wait_for_run_status(server.repo, run_id, ("succeeded", "failed"))
    assert doc["status"] == "succeeded" and doc["initiatedBy"] == ALICE and "resumedBy" not in doc
    step = doc["jobs"][0]["steps"][0]
    assert step["signal"]["by"] == "token:approver" and step["signal"]["message"] == {"version": "1.2"}


def test_cancels_over_the_api_record_the_token_whoever_started_the_run(served):
    server, tokens = served
    # a suspended run: cancelled at once, recorded by the token
    suspended = server.post(f"{API}/workflows/gated/run", {}, token=tokens["ci"]).doc["id"]
    denied = server.post(f"{API}/workflows/gated/cancel", {"runId": suspended}, token=tokens["viewer"])
    assert denied.status == 403 and run_record(server.repo, suspended)["status"] == "suspended"
    done = server.post(f"{API}/workflows/gated/cancel", {"runId": suspended}, token=tokens["approver"])
    assert done.status == 200 and done.doc["cancelRequested"] is False, done.doc
    doc = run_record(server.repo, suspended)
    assert doc["status"] == "cancelled" and doc["cancelledBy"] == "token:approver"
    assert doc["initiatedBy"] == ALICE

    # a run going in another process (the CLI's): asked to stop; its engine records who asked
    proc = popen(server.repo, "workflow", "run", "slow")
    try:
        end = time.monotonic() + 60
        while True:
            rows = cli(server.repo, "workflow", "history", "slow").data or []
            if rows and rows[0]["status"] == "running":
                break
            assert time.monotonic() < end and proc.poll() is None, (rows, proc.poll())
            time.sleep(0.3)
        run_id = rows[0]["id"]
        asked = server.post(f"{API}/workflows/slow/cancel", {"runId": run_id}, token=tokens["approver"])
        assert asked.status == 200 and asked.doc["cancelRequested"] is True, asked.doc
        proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    doc = run_record(server.repo, run_id)
    assert doc["status"] == "cancelled" and doc["cancelledBy"] == "token:approver"
    assert doc["initiatedBy"].startswith("user:")  # started from the CLI: the local user


def test_the_dashboard_acts_as_the_logged_in_token_and_shows_who(served):
    server, tokens = served
    started = server.post(f"{API}/workflows/gated/run", {}, token=tokens["ci"])
    run_id = started.doc["id"]
    page = f"/ui/workflows/gated/runs/{run_id}"
    viewer = Session(server)
    viewer.login(tokens["viewer"])
    status, text = viewer.post(f"{page}/approve", {"step": "gate"}, csrf_from=page)
    assert status == 403  # a reader's form is refused: nothing decided in its name
    approver = Session(server)
    approver.login(tokens["approver"])
    status, text = approver.post(f"{page}/approve", {"step": "gate", "reason": "looks fine"}, csrf_from=page)
    assert status == 200, text[:500]
    doc = wait_for_run_status(server.repo, run_id, ("succeeded", "failed"))
    assert doc["status"] == "succeeded" and doc["resumedBy"] == "token:approver"
    gate = next(s for j in doc["jobs"] for s in j["steps"] if s["name"] == "gate")
    assert gate["approval"]["decidedBy"] == "token:approver"
    status, text = viewer.get(page)
    shown = text_of(text)
    assert status == 200 and f"by {ALICE}" in shown and "continued by token:approver" in shown
    assert "approved by token:approver" in shown
    status, listing = viewer.get("/ui/workflows/gated")
    assert status == 200 and ALICE in text_of(listing)
