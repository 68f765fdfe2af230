"""`vault:` grants over HTTP (issue 23, "every route that reads or writes a
vault checks vault: grants"): a run a caller starts evaluates the
definition's `vault.get('prod', ...)` on that caller's behalf. A token
with `run` on the `deploy` model (whose env takes a secret of vault
`prod`) but no grant on `vault:prod` is refused before the secret is
fetched, by the method route, a workflow (whose steps run in threads of
their own), the dashboard's run form; the refusal is audited and the
secret is in no answer. With `read` on `vault:prod` the same runs work,
the secret masked. The local user's token is not checked (full access),
and a webhook runs with the server's authority."""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from swamp.serve.webhooks import signed_headers
from tests.dashboard.http import Session
from tests.helpers import init_repo, write_deploy_with_secret, write_shell, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"
SECRET = "prod-api-token-81f3c2"
WEBHOOK_SECRET = "whsec-vault-grants-0123456789"

GRANTS = """
grants:
  - subjects: ["token:novault", "token:reader"]
    actions: [run, read]
    resources: ["model:deploy", "model:hello", "data:deploy/*", "data:hello/*", "workflow:ship",
                "workflow:gated-ship"]
  - subjects: ["token:novault", "token:reader"]
    actions: [run, read, approve]
    resources: ["workflow:signal-ship"]
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["vault:prod"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("vaultgrants") / "repo")
    write_deploy_with_secret(repo, SECRET)
    write_shell(repo, "hello", "type: command/shell\nname: hello\nglobalArguments: {run: 'echo hello'}\n")
    # two steps of one level on two models: they run in two threads of the engine's pool
    write_workflow(repo, "ship", """
        jobs:
          - name: main
            steps:
              - name: greet
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
              - name: deploy
                task: {type: model_method, modelIdOrName: deploy, methodName: execute}
    """)
    # waits for an approval, then deploys: whoever resumes it reads the vault
    write_workflow(repo, "gated-ship", """
        jobs:
          - name: main
            steps:
              - name: wait
                task: {type: manual_approval, prompt: "ship?"}
              - name: deploy
                dependsOn: [{step: wait, condition: {type: succeeded}}]
                task: {type: model_method, modelIdOrName: deploy, methodName: execute}
    """)
    # waits for a signal, then deploys: the server continues it by itself, for whoever started it
    write_workflow(repo, "signal-ship", """
        jobs:
          - name: main
            steps:
              - name: release
                task: {type: wait_for_signal, prompt: "which version?"}
              - name: deploy
                dependsOn: [{step: release}]
                task: {type: model_method, modelIdOrName: deploy, methodName: execute}
    """)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {name: mint_token(repo, name) for name in ("novault", "reader")}
    server = Serve(repo, "--dashboard", "--webhook", "gh=ship", default_auth=True,
                   env={"SWAMP_WEBHOOK_GH_SECRET": WEBHOOK_SECRET})
    tokens["local"] = server.local_token
    yield server, tokens
    server.stop()


def no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def vault_reads(server: Serve) -> int:
    """The reads of vault prod in the vault's own audit log."""
    lines = lines_of(server.repo / ".swamp" / "secrets" / "audit.jsonl")
    return sum(1 for e in lines if e["op"] == "read" and e["vault"] == "prod")


def refusals(server: Serve, token: str) -> list[dict]:
    lines = lines_of(server.repo / ".swamp" / "cache" / "serve" / "audit.jsonl")
    return [e for e in lines if e.get("resource") == "vault:prod" and e.get("code") == "forbidden"
            and f"token:{token}" in e.get("who", [])]


def assert_refused_for_vault(message: str) -> None:
    assert "read on vault:prod is not allowed" in message, message
    assert "token:novault" in message


# -------------------------------------------------------------- method runs
def test_run_without_a_vault_grant_is_refused_before_the_secret_is_fetched(served):
    server, tokens = served
    reads, audited = vault_reads(server), len(refusals(server, "novault"))
    refused = server.run_method("deploy", "execute", token=tokens["novault"])
    assert refused.status == 403, refused.doc
    assert refused.error["code"] == "forbidden"
    assert_refused_for_vault(refused.error["error"])
    assert "read on vault:prod" in refused.error["hint"]
    no_secret(json.dumps(refused.doc))
    assert vault_reads(server) == reads  # nothing was taken out of the vault
    assert len(refusals(server, "novault")) == audited + 1
    outputs = server.get(f"{API}/outputs?model=deploy", token=tokens["novault"]).doc
    no_secret(json.dumps(outputs))


def test_a_streamed_run_without_a_vault_grant_ends_in_the_same_refusal(served):
    server, tokens = served
    events = list(server.events(f"{API}/models/deploy/methods/execute/run", {"inputs": {}},
                                token=tokens["novault"]))
    no_secret(json.dumps(events))
    event, data = events[-1]
    assert event == "error" and data["status"] == 403, events
    assert_refused_for_vault(data["body"]["error"])


def test_run_with_read_on_the_vault_runs_and_the_secret_is_masked(served):
    server, tokens = served
    ran = server.run_method("deploy", "execute", token=tokens["reader"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    got = server.get(f"{API}/data/deploy/result", token=tokens["reader"])
    assert got.status == 200, got.doc
    assert got.doc["content"]["stdout"].startswith("deployed with ")
    no_secret(json.dumps(ran.doc), json.dumps(got.doc))


def test_the_local_users_token_is_not_asked_for_vault_grants(served):
    server, tokens = served
    ran = server.run_method("deploy", "execute", token=tokens["local"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    no_secret(json.dumps(ran.doc))


# ------------------------------------------------------------------ workflows
def step_of(run: dict, name: str) -> dict:
    return next(s for j in run["jobs"] for s in j["steps"] if s["name"] == name)


def test_a_workflow_step_without_a_vault_grant_fails_and_reads_nothing(served):
    server, tokens = served
    reads = vault_reads(server)
    ran = server.post(f"{API}/workflows/ship/run", {}, token=tokens["novault"])
    assert ran.status == 200, ran.doc
    assert ran.doc["status"] == "failed", ran.doc
    deploy = step_of(ran.doc, "deploy")
    assert deploy["status"] == "failed"
    assert_refused_for_vault(deploy["error"])
    assert step_of(ran.doc, "greet")["status"] == "succeeded"  # its own step needs no vault
    log = server.get(f"{API}/workflows/ship/runs/{ran.doc['id']}/log", token=tokens["novault"])
    no_secret(json.dumps(ran.doc), json.dumps(log.doc))
    assert vault_reads(server) == reads
    assert refusals(server, "novault")


@pytest.mark.parametrize("who, outcome", [("novault", "failed"), ("reader", "succeeded")])
def test_a_detached_run_reads_its_vaults_for_who_started_it(served, who, outcome):
    """"wait": false runs the workflow in a thread of the server's own: the
    caller's vault grants go with it, as they do with a run that answers
    when it ends."""
    server, tokens = served
    started = server.post(f"{API}/workflows/ship/run", {"wait": False}, token=tokens[who])
    assert started.status == 202, started.doc
    run_id = started.doc["runId"]
    deadline = time.monotonic() + 60
    while (run := server.get(f"{API}/runs/{run_id}", token=tokens[who])).status != 200 \
            or run.doc["status"] not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, run
        time.sleep(0.2)
    assert run.doc["status"] == outcome, run.doc
    if outcome == "failed":
        assert_refused_for_vault(step_of(run.doc, "deploy")["error"])
    no_secret(json.dumps(run.doc))


def test_a_workflow_step_with_read_on_the_vault_runs(served):
    server, tokens = served
    ran = server.post(f"{API}/workflows/ship/run", {}, token=tokens["reader"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    log = server.get(f"{API}/workflows/ship/runs/{ran.doc['id']}/log", token=tokens["reader"])
    no_secret(json.dumps(ran.doc), json.dumps(log.doc))


@pytest.mark.parametrize("who, outcome", [("novault", "failed"), ("reader", "succeeded")])
def test_resuming_a_run_reads_its_vaults_for_who_resumes_it(served, who, outcome):
    server, tokens = served
    started = server.post(f"{API}/workflows/gated-ship/run", {}, token=tokens["local"])
    assert started.status == 200 and started.doc["status"] == "suspended", started.doc
    run_id = started.doc["id"]
    # the decision only: the run is then continued by the token under test
    approved = server.post(f"{API}/workflows/gated-ship/approve", {"step": "wait", "runId": run_id, "resume": False},
                           token=tokens["local"])
    assert approved.status == 200, approved.doc
    resumed = server.post(f"{API}/workflows/gated-ship/resume", {"runId": run_id}, token=tokens[who])
    assert resumed.status == 200 and resumed.doc["status"] == outcome, resumed.doc
    if outcome == "failed":
        assert_refused_for_vault(step_of(resumed.doc, "deploy")["error"])
    no_secret(json.dumps(resumed.doc))


@pytest.mark.parametrize("who, outcome", [("novault", "failed"), ("reader", "succeeded")])
def test_a_run_the_server_continues_after_a_signal_reads_vaults_for_who_started_it(served, who, outcome):
    server, tokens = served
    started = server.post(f"{API}/workflows/signal-ship/run", {}, token=tokens[who])
    assert started.status == 200 and started.doc["status"] == "suspended", started.doc
    run_id = started.doc["id"]
    sent = server.post(f"{API}/workflows/signal-ship/signal", {"step": "release", "message": {"v": "1"},
                                                               "runId": run_id}, token=tokens[who])
    assert sent.status == 200, sent.doc
    deadline = time.monotonic() + 60
    while (run := server.get(f"{API}/workflows/signal-ship/runs/{run_id}", token=tokens["local"]).doc)["status"] \
            not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, run
        time.sleep(0.2)
    assert run["status"] == outcome, run
    if outcome == "failed":
        assert_refused_for_vault(step_of(run, "deploy")["error"])
    no_secret(json.dumps(run))


# ------------------------------------------------------------------ dashboard
def newest_run(server: Serve, token: str, after: set[str]) -> dict:
    deadline = time.monotonic() + 60
    while True:
        runs = server.get(f"{API}/workflows/ship/runs", token=token).doc
        rows = runs["runs"] if isinstance(runs, dict) else runs
        new = [r for r in rows if r["id"] not in after and r["status"] in ("succeeded", "failed")]
        if new:
            return server.get(f"{API}/workflows/ship/runs/{new[0]['id']}", token=token).doc
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


def run_ids(server: Serve, token: str) -> set[str]:
    runs = server.get(f"{API}/workflows/ship/runs", token=token).doc
    return {r["id"] for r in (runs["runs"] if isinstance(runs, dict) else runs)}


@pytest.mark.parametrize("who, outcome", [("novault", "failed"), ("reader", "succeeded")])
def test_the_dashboards_run_form_runs_with_the_callers_vault_grants(served, who, outcome):
    server, tokens = served
    before = run_ids(server, tokens["local"])
    ui = Session(server)
    ui.login(tokens[who])
    status, page = ui.post("/ui/workflows/ship/run", {}, csrf_from="/ui/workflows/ship")
    assert status == 200, page[:300]
    no_secret(page)
    run = newest_run(server, tokens["local"], before)
    assert run["status"] == outcome, run
    if outcome == "failed":
        assert_refused_for_vault(step_of(run, "deploy")["error"])
    no_secret(json.dumps(run))


# ------------------------------------------------------------------- webhooks
def test_a_webhook_runs_with_the_servers_authority(served):
    server, tokens = served
    before = run_ids(server, tokens["local"])
    body = b"{}"
    sent = server.request("POST", "/hooks/gh", raw=body,
                          headers={"Content-Type": "application/json",
                                   **signed_headers(WEBHOOK_SECRET, body, webhook="gh")})
    assert sent.status == 202, sent.doc
    run = newest_run(server, tokens["local"], before)
    assert run["status"] == "succeeded", run
    no_secret(json.dumps(run))


def test_the_dashboards_resume_form_resumes_with_the_callers_vault_grants(served):
    server, tokens = served
    started = server.post(f"{API}/workflows/gated-ship/run", {}, token=tokens["local"])
    run_id = started.doc["id"]
    assert server.post(f"{API}/workflows/gated-ship/approve", {"step": "wait", "runId": run_id, "resume": False},
                       token=tokens["local"]).status == 200
    ui = Session(server)
    ui.login(tokens["novault"])
    status, page = ui.post(f"/ui/workflows/gated-ship/runs/{run_id}/resume", {},
                           csrf_from=f"/ui/workflows/gated-ship/runs/{run_id}")
    assert status == 200, page[:300]
    deadline = time.monotonic() + 60
    while (run := server.get(f"{API}/workflows/gated-ship/runs/{run_id}", token=tokens["local"]).doc)["status"] \
            not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, run
        time.sleep(0.2)
    assert run["status"] == "failed", run
    assert_refused_for_vault(step_of(run, "deploy")["error"])
    no_secret(json.dumps(run), page)
