"""The grant table of docs/serve.md ("Grants"), row by row: every place a
grant is enforced, tried with a token that lacks exactly that grant (it has
the grants below it: a `run` row is tried by a token that may read
everything). Each refusal is 403 `forbidden` and runs nothing. A test
below fails when a route of serve/routes.py has no row here, so a new
route cannot skip the table."""

from __future__ import annotations

import textwrap

import pytest

from tests.dashboard.http import Session, text_of
from tests.helpers import cli, init_repo, write_deploy_with_secret, write_shell, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GRANTS = """
grants:
  - subjects: ["token:reader", "token:runner", "token:approver"]
    actions: [read]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:runner", "token:approver"]
    actions: [run]
    resources: ["workflow:*", "model:*"]
  - subjects: ["token:approver"]
    actions: [approve]
    resources: ["workflow:*"]
"""

#: op -> (HTTP method, path, body, the grant it needs, the token that lacks it)
ROWS = {
    "getModel": ("GET", f"{API}/models/hello", None, "read model:hello", "nobody"),
    "getOutput": ("GET", f"{API}/outputs/{{output}}", None, "read model:hello", "nobody"),
    "getOutputLog": ("GET", f"{API}/outputs/{{output}}/log", None, "read model:hello", "nobody"),
    "workflowHistory": ("GET", f"{API}/workflows/gated/runs", None, "read workflow:gated", "nobody"),
    "getWorkflowRun": ("GET", f"{API}/workflows/gated/runs/latest", None, "read workflow:gated", "nobody"),
    "getRun": ("GET", f"{API}/runs/{{run}}", None, "read workflow:gated", "nobody"),
    "getWorkflowRunLog": ("GET", f"{API}/workflows/gated/runs/latest/log", None, "read workflow:gated", "nobody"),
    "getData": ("GET", f"{API}/data/hello/result", None, "read data:hello/result", "nobody"),
    "dataVersions": ("GET", f"{API}/data/hello/result/versions", None, "read data:hello/result", "nobody"),
    "datastoreStatus": ("GET", f"{API}/datastore/status", None, "read data:*", "nobody"),
    "runMethod": ("POST", f"{API}/models/hello/methods/execute/run", {}, "run model:hello", "reader"),
    "runWorkflow": ("POST", f"{API}/workflows/gated/run", {}, "run workflow:gated", "reader"),
    "runWorkflow:fromFailed": ("POST", f"{API}/workflows/gated/run", {"fromFailed": "0000-no-such-run"},
                               "run workflow:gated", "reader"),
    "resumeWorkflow": ("POST", f"{API}/workflows/gated/resume", {}, "run workflow:gated", "reader"),
    "cancelWorkflow": ("POST", f"{API}/workflows/gated/cancel", {}, "run workflow:gated", "reader"),
    "approveStep": ("POST", f"{API}/workflows/gated/approve", {"step": "wait"}, "approve workflow:gated", "runner"),
    "rejectStep": ("POST", f"{API}/workflows/gated/reject", {"step": "wait"}, "approve workflow:gated", "runner"),
    "signalStep": ("POST", f"{API}/workflows/gated/signal", {"step": "wait", "message": {"ok": True}},
                   "approve workflow:gated", "runner"),
    "deleteData": ("DELETE", f"{API}/data/hello/result", None, "write data:hello/result", "approver"),
    "runMethod:fixedArgument": ("POST", f"{API}/models/hello/methods/execute/run", {"inputs": {"run": "id"}},
                                "write model:hello", "approver"),
    "runMethod:type": ("POST", f"{API}/models/hello/methods/execute/run",
                       {"type": "command/shell", "inputs": {"run": "id"}}, "write model:hello", "approver"),
    "reloadAccess": ("POST", f"{API}/access/reload", {}, "admin access:reload", "approver"),
    # a run evaluates its definition's vault.get() for the caller: deploy's env reads vault prod
    "runMethod:vault": ("POST", f"{API}/models/deploy/methods/execute/run", {}, "read vault:prod", "approver"),
    "reloadServe": ("POST", f"{API}/serve/reload", {}, "admin serve:reload", "approver"),
    "listGrants": ("GET", f"{API}/access/grants", None, "admin access:grants", "approver"),
    "createGrant": ("POST", f"{API}/access/grants", {"subjects": ["token:approver"], "actions": ["admin"],
                                                     "resources": ["*"]}, "admin access:grants", "approver"),
    "revokeGrant": ("DELETE", f"{API}/access/grants/g-000000000000", None, "admin access:grants", "approver"),
    "checkAccess": ("POST", f"{API}/access/check", {"subjects": ["user:x"], "action": "read", "resource": "model:x"},
                    "admin access:grants", "approver"),
    "listGroups": ("GET", f"{API}/access/groups", None, "admin access:groups", "approver"),
    "createGroup": ("POST", f"{API}/access/groups", {"name": "admins"}, "admin access:groups", "approver"),
    "groupMembers": ("GET", f"{API}/access/groups/admins", None, "admin access:groups", "approver"),
    "addGroupMember": ("POST", f"{API}/access/groups/admins/add-member", {"member": "token:approver"},
                       "admin access:groups", "approver"),
    "removeGroupMember": ("POST", f"{API}/access/groups/admins/remove-member", {"member": "token:approver"},
                          "admin access:groups", "approver"),
}

#: list routes: each row the caller may not read is left out (a token with no grant sees none)
LISTS = {
    "listModels": ("GET", f"{API}/models", None),
    "listOutputs": ("GET", f"{API}/outputs", None),
    "listSignals": ("GET", f"{API}/signals", None),
    "listData": ("GET", f"{API}/data", None),
    "searchData": ("GET", f"{API}/data/search?q=result", None),
    "queryData": ("POST", f"{API}/data/query", {"predicate": "true"}),
}

#: dashboard forms: (path, form fields, the grant, the token that lacks it)
FORMS = {
    "ui:runWorkflow": ("/ui/workflows/gated/run", {}, "run workflow:gated", "reader"),
    "ui:resumeWorkflow": ("/ui/workflows/gated/runs/{run}/resume", {}, "run workflow:gated", "reader"),
    "ui:cancelWorkflow": ("/ui/workflows/gated/runs/{run}/cancel", {}, "run workflow:gated", "reader"),
    "ui:rerunWorkflow": ("/ui/workflows/gated/runs/{run}/rerun", {}, "run workflow:gated", "reader"),
    "ui:approveStep": ("/ui/workflows/gated/runs/{run}/approve", {"step": "main/wait"}, "approve workflow:gated",
                       "runner"),
    "ui:rejectStep": ("/ui/workflows/gated/runs/{run}/reject", {"step": "main/wait"}, "approve workflow:gated",
                      "runner"),
    "ui:signalStep": ("/ui/workflows/gated/runs/{run}/signal", {"step": "main/wait", "message": "true"},
                      "approve workflow:gated", "runner"),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("grant-table") / "repo")
    write_shell(repo, "hello", "type: command/shell\nname: hello\nglobalArguments: {run: 'echo hello'}\n")
    write_deploy_with_secret(repo, "grant-table-secret")
    write_workflow(repo, "gated", """
        jobs:
          - name: main
            steps:
              - name: wait
                task: {type: manual_approval, prompt: "ok?"}
    """)
    ran = cli(repo, "model", "method", "run", "hello", "execute")
    assert ran.code == 0, ran
    suspended = cli(repo, "workflow", "run", "gated")
    assert suspended.data["status"] == "suspended", suspended
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {name: mint_token(repo, name) for name in ("nobody", "reader", "runner", "approver")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield server, tokens, {"output": ran.data["id"], "run": suspended.data["id"]}
    server.stop()


def _state(server: Serve, token: str) -> tuple:
    """What a refused request must leave as it was: outputs, runs, data."""
    outputs = server.get(f"{API}/outputs", token=token).doc
    runs = server.get(f"{API}/workflows/gated/runs", token=token).doc
    versions = server.get(f"{API}/data/hello/result/versions", token=token).doc
    return len(outputs), [(r["id"], r["status"]) for r in runs["runs"]] if isinstance(runs, dict) else runs, versions


@pytest.mark.parametrize("op", sorted(ROWS))
def test_each_route_refuses_a_token_without_its_grant(served, op):
    server, tokens, ids = served
    method, path, body, _grant, lacking = ROWS[op]
    before = _state(server, tokens["approver"])
    reply = server.request(method, path.format(**ids), body, token=tokens[lacking])
    assert reply.status == 403 and reply.error["code"] == "forbidden", (op, reply.status, reply.doc)
    assert _state(server, tokens["approver"]) == before  # nothing ran, nothing changed


@pytest.mark.parametrize("op", sorted(LISTS))
def test_each_list_leaves_out_the_rows_a_token_may_not_read(served, op):
    server, tokens, _ = served
    method, path, body = LISTS[op]
    mine = server.request(method, path, body, token=tokens["nobody"])
    assert mine.status == 200 and mine.doc == [], (op, mine.doc)
    if op != "listSignals":  # nothing waits for a signal here
        theirs = server.request(method, path, body, token=tokens["approver"])
        assert theirs.status == 200 and theirs.doc, (op, theirs.doc)


@pytest.mark.parametrize("op", sorted(FORMS))
def test_each_dashboard_form_refuses_a_token_without_its_grant(served, op):
    server, tokens, ids = served
    path, fields, _grant, lacking = FORMS[op]
    ui = Session(server)
    ui.login(tokens[lacking])
    before = _state(server, tokens["approver"])
    status, page = ui.post(path.format(**ids), fields, csrf_from=f"/ui/workflows/gated/runs/{ids['run']}")
    assert status == 403 and "is not allowed" in text_of(page), (op, status, text_of(page)[:300])
    assert _state(server, tokens["approver"]) == before


def test_every_route_has_a_row():
    from swamp.serve.routes import ROUTES

    ops = {r.op for r in ROUTES}
    rows = {op.split(":")[0] for op in ROWS} | set(LISTS)
    assert ops <= rows, f"routes without a row in the grant table: {sorted(ops - rows)}"
