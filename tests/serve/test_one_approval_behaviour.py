"""One approval behaviour (issue 25, item 4): a decision taken from the
CLI, the API (and `--server`) or the dashboard continues the run wherever
that process or server can continue it; with several runs waiting at a
step and no --run, `approve`/`reject` refuse to guess (the error lists the
runs, the hint names --run); every hint a suspended run prints names
--run; a rejected run is `failed` with the reason. Someone who may approve
but not run decides, and the run waits for someone who may run it."""

from __future__ import annotations

import textwrap

import pytest

from tests.dashboard.http import Session
from tests.helpers import cli, init_repo, run_record, wait_for_run_status, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GATED = """
jobs:
  - name: main
    steps:
      - name: gate
        task: {type: manual_approval, prompt: "go on?"}
      - name: last
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo last"}}
"""

GRANTS = """
grants:
  - subjects: ["token:ops"]
    actions: [read, run, approve]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:approver"]
    actions: [read, approve]
    resources: ["workflow:*", "model:*", "data:*"]
"""


def _repo(path):
    repo = init_repo(path)
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "gated", GATED)
    return repo


def _suspended(repo) -> str:
    started = cli(repo, "workflow", "run", "gated")
    assert started.code == 0 and started.data["status"] == "suspended", started
    return started.data["id"]


@pytest.fixture
def repo(tmp_path):
    return _repo(tmp_path / "repo")


def test_the_cli_refuses_to_guess_between_two_waiting_runs_then_continues_the_one_named(repo):
    first, second = _suspended(repo), _suspended(repo)
    hint = cli(repo, "workflow", "run", "gated", json=False)
    assert f"swamp workflow approve gated gate --run {hint.stdout.split('run ')[1].split()[0]}" in hint.stdout

    guessed = cli(repo, "workflow", "approve", "gated", "gate")
    assert guessed.code == 1 and guessed.error["code"] == "conflict", guessed
    assert first in guessed.error["error"] and second in guessed.error["error"]
    assert "--run RUN_ID" in guessed.error["hint"]
    assert run_record(repo, first)["status"] == run_record(repo, second)["status"] == "suspended"  # nothing decided

    approved = cli(repo, "workflow", "approve", "gated", "gate", "--run", first, "--reason", "fine")
    assert approved.code == 0, approved
    assert approved.data["run"]["status"] == "succeeded" and approved.data["resumed"] is True
    assert approved.data["decision"] == "approved" and approved.data["runId"] == first
    assert run_record(repo, first)["status"] == "succeeded" and run_record(repo, second)["status"] == "suspended"


def test_a_rejected_run_is_failed_with_the_reason(repo):
    run_id = _suspended(repo)
    rejected = cli(repo, "workflow", "reject", "gated", "gate", "--run", run_id, "--reason", "not today")
    assert rejected.code == 0, rejected  # the decision was taken; the run failing is what it asked for
    doc = run_record(repo, run_id)
    assert doc["status"] == "failed" and "not today" in doc["failureReason"], doc
    last = next(s for j in doc["jobs"] for s in j["steps"] if s["name"] == "last")
    assert last["status"] != "succeeded"


def test_no_resume_only_records_the_decision_and_the_hint_names_the_run(repo):
    run_id = _suspended(repo)
    decided = cli(repo, "workflow", "approve", "gated", "gate", "--no-resume", json=False)  # the only one waiting
    assert decided.code == 0, decided
    assert f"swamp workflow resume gated --run {run_id}" in decided.stdout
    assert run_record(repo, run_id)["status"] == "suspended"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = _repo(tmp_path_factory.mktemp("approvals") / "repo")
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ops": mint_token(repo, "ops"), "approver": mint_token(repo, "approver")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield server, tokens
    server.stop()


def _suspended_on(server, token) -> str:
    started = server.post(f"{API}/workflows/gated/run", {}, token=token)
    assert started.status == 200 and started.doc["status"] == "suspended", started.doc
    return started.doc["id"]


def test_the_api_refuses_to_guess_then_the_server_continues_the_run(served):
    server, tokens = served
    first, second = _suspended_on(server, tokens["ops"]), _suspended_on(server, tokens["ops"])
    guessed = server.post(f"{API}/workflows/gated/approve", {"step": "gate"}, token=tokens["ops"])
    assert guessed.status == 409 and first in guessed.error["error"] and second in guessed.error["error"]
    assert "--run" in guessed.error["hint"]

    decided = server.post(f"{API}/workflows/gated/approve", {"step": "gate", "runId": first},
                          token=tokens["ops"])
    assert decided.status == 200 and decided.doc["resumed"] is True, decided.doc
    assert wait_for_run_status(server.repo, first, ("succeeded", "failed"))["status"] == "succeeded"

    rejected = server.post(f"{API}/workflows/gated/reject", {"step": "gate", "runId": second, "reason": "no"},
                           token=tokens["ops"])
    assert rejected.status == 200 and rejected.doc["resumed"] is True, rejected.doc
    doc = wait_for_run_status(server.repo, second, ("succeeded", "failed"))
    assert doc["status"] == "failed" and "no" in doc["failureReason"]


def test_someone_who_may_approve_but_not_run_decides_and_the_run_waits(served):
    server, tokens = served
    run_id = _suspended_on(server, tokens["ops"])
    decided = server.post(f"{API}/workflows/gated/approve", {"step": "gate", "runId": run_id},
                          token=tokens["approver"])
    assert decided.status == 200 and decided.doc["resumed"] is False, decided.doc
    assert "run on workflow:gated" in decided.doc["resumeHint"]
    assert run_record(server.repo, run_id)["status"] == "suspended"
    resumed = server.post(f"{API}/workflows/gated/resume", {"runId": run_id}, token=tokens["ops"])
    assert resumed.status == 200 and resumed.doc["status"] == "succeeded"


def test_approve_with_server_continues_the_run_on_the_server(served):
    server, tokens = served
    run_id = _suspended_on(server, tokens["ops"])
    decided = cli(server.repo, "--server", server.url, "--token", tokens["ops"], "workflow", "approve", "gated",
                  "gate", "--run", run_id, json=False)
    assert decided.code == 0, decided
    assert f"swamp workflow history get {run_id} --follow" in decided.stdout
    assert wait_for_run_status(server.repo, run_id, ("succeeded", "failed"))["status"] == "succeeded"


def test_the_dashboard_continues_the_run_as_the_api_does(served):
    server, tokens = served
    run_id = _suspended_on(server, tokens["ops"])
    page = f"/ui/workflows/gated/runs/{run_id}"
    ops = Session(server)
    ops.login(tokens["ops"])
    status, text = ops.post(f"{page}/approve", {"step": "gate"}, csrf_from=page)
    assert status == 200, text[:500]
    assert wait_for_run_status(server.repo, run_id, ("succeeded", "failed"))["status"] == "succeeded"


def test_no_resume_with_server_only_records_the_decision(served):
    server, tokens = served
    run_id = _suspended_on(server, tokens["ops"])
    decided = cli(server.repo, "--server", server.url, "--token", tokens["ops"], "workflow", "approve", "gated",
                  "gate", "--run", run_id, "--no-resume")
    assert decided.code == 0 and decided.data["resumed"] is False, decided
    assert run_record(server.repo, run_id)["status"] == "suspended"
    resumed = server.post(f"{API}/workflows/gated/resume", {"runId": run_id}, token=tokens["ops"])
    assert resumed.status == 200 and resumed.doc["status"] == "succeeded"


TWO_GATES = """
jobs:
  - name: main
    steps:
      - {name: legal, task: {type: manual_approval, prompt: "legal ok?"}}
      - {name: ops, task: {type: manual_approval, prompt: "ops ok?"}}
      - name: last
        dependsOn: [{step: legal}, {step: ops}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo last"}}
"""


def test_the_run_continues_only_once_its_last_decision_is_taken(repo):
    write_workflow(repo, "twice", TWO_GATES)
    run_id = cli(repo, "workflow", "run", "twice").data["id"]
    first = cli(repo, "workflow", "approve", "twice", "legal", json=False)
    assert first.code == 0 and "still waits for another decision" in first.stdout, first
    assert run_record(repo, run_id)["status"] == "suspended"
    last = cli(repo, "workflow", "approve", "twice", "ops")
    assert last.code == 0 and last.data["resumed"] is True and last.data["run"]["status"] == "succeeded", last
