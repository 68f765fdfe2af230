"""Re-run from failure and retried steps over `swamp serve`: the API's
``fromFailed`` and the run page's "Re-run from failure" button need `run`
on the workflow (a token that only reads is refused, and nothing runs);
the run document and the run page show each attempt and what a re-run
kept."""

from __future__ import annotations

import textwrap

import pytest

from tests.dashboard.http import Session, text_of
from tests.helpers import cli, init_repo, write_shell, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GRANTS = """
grants:
  - subjects: ["token:reader", "token:runner"]
    actions: [read]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:runner"]
    actions: [run]
    resources: ["workflow:*", "model:*"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("rerun") / "repo")
    # absolute paths: the server's steps run in its own working directory
    write_shell(repo, "first", f"type: command/shell\nname: first\n"
                               f"globalArguments: {{run: 'echo ran >> {repo}/first.ran'}}\n")
    write_shell(repo, "second", f"type: command/shell\nname: second\n"
                                f"globalArguments: {{run: 'echo ran >> {repo}/second.ran; test -f {repo}/fixed'}}\n")
    write_shell(repo, "flaky", textwrap.dedent(f"""
        type: command/shell
        name: flaky
        globalArguments:
          run: 'echo x >> {repo}/flaky.ran; test $(wc -l < {repo}/flaky.ran) -ge 2'
    """).lstrip())
    write_workflow(repo, "pipe", """
        jobs:
          - name: build
            steps:
              - {name: first, task: {type: model_method, modelIdOrName: first, methodName: execute}}
              - name: second
                dependsOn: [{step: first}]
                task: {type: model_method, modelIdOrName: second, methodName: execute}
    """)
    write_workflow(repo, "retried", """
        jobs:
          - name: main
            steps:
              - {name: flaky, retries: 1, task: {type: model_method, modelIdOrName: flaky, methodName: execute}}
    """)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {name: mint_token(repo, name) for name in ("reader", "runner")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield server, tokens, repo
    server.stop()


def _ran(repo, name) -> int:
    p = repo / f"{name}.ran"
    return len(p.read_text().splitlines()) if p.exists() else 0


def _runs(server, tokens) -> list:
    doc = server.get(f"{API}/workflows/pipe/runs", token=tokens["reader"]).doc
    return doc["runs"] if isinstance(doc, dict) else doc


def _failed(server, tokens) -> dict:
    r = server.post(f"{API}/workflows/pipe/run", {}, token=tokens["runner"])
    assert r.status == 200 and r.doc["status"] == "failed", (r.status, r.doc)
    return r.doc


def test_the_api_reruns_a_failed_run_for_a_token_that_may_run_it(served):
    server, tokens, repo = served
    old = _failed(server, tokens)
    before = _ran(repo, "first")
    (repo / "fixed").touch()
    try:
        r = server.post(f"{API}/workflows/pipe/run", {"fromFailed": old["id"]}, token=tokens["runner"])
    finally:
        (repo / "fixed").unlink()
    assert r.status == 200 and r.doc["status"] == "succeeded", r.doc
    assert r.doc["rerunOf"] == old["id"]
    assert r.doc["jobs"][0]["steps"][0]["reusedFrom"] == old["id"]
    assert _ran(repo, "first") == before  # the succeeded step did not run again


def test_the_api_refuses_a_rerun_to_a_token_that_only_reads(served):
    server, tokens, repo = served
    old = _failed(server, tokens)
    runs_before = len(_runs(server, tokens))
    ran_before = _ran(repo, "second")
    r = server.post(f"{API}/workflows/pipe/run", {"fromFailed": old["id"]}, token=tokens["reader"])
    assert r.status == 403 and r.error["code"] == "forbidden"
    assert len(_runs(server, tokens)) == runs_before
    assert _ran(repo, "second") == ran_before


def test_a_rerun_of_a_run_that_is_not_this_workflows_is_not_found(served):
    server, tokens, _ = served
    r = server.post(f"{API}/workflows/retried/run", {"fromFailed": _failed(server, tokens)["id"]},
                    token=tokens["runner"])
    assert r.status == 404 and "has no run" in r.error["error"], r.doc


def test_the_run_document_and_the_run_page_show_each_attempt(served):
    server, tokens, _ = served
    r = server.post(f"{API}/workflows/retried/run", {}, token=tokens["runner"])
    assert r.status == 200 and r.doc["status"] == "succeeded", r.doc
    step = r.doc["jobs"][0]["steps"][0]
    assert (step["attempt"], step["maxAttempts"]) == (2, 2)
    assert [a["status"] for a in step["attempts"]] == ["failed", "succeeded"]
    got = server.get(f"{API}/workflows/retried/runs/{r.doc['id']}", token=tokens["reader"])
    assert got.doc["jobs"][0]["steps"][0]["attempts"] == step["attempts"]
    ui = Session(server)
    ui.login(tokens["reader"])
    status, page = ui.get(f"/ui/workflows/retried/runs/{r.doc['id']}")
    assert status == 200
    text = text_of(page)
    assert "attempt 2/2" in text and "attempt 1" in text and "command exited with code 1" in text


def test_the_run_page_offers_the_rerun_button_only_to_who_may_run(served):
    server, tokens, _ = served
    old = _failed(server, tokens)
    ui = Session(server)
    ui.login(tokens["reader"])
    assert "Re-run from failure" not in ui.get(f"/ui/workflows/pipe/runs/{old['id']}")[1]
    ui = Session(server)
    ui.login(tokens["runner"])
    assert "Re-run from failure" in ui.get(f"/ui/workflows/pipe/runs/{old['id']}")[1]


def test_the_rerun_button_starts_a_linked_run(served):
    server, tokens, repo = served
    old = _failed(server, tokens)
    ui = Session(server)
    ui.login(tokens["runner"])
    status, page = ui.post(f"/ui/workflows/pipe/runs/{old['id']}/rerun", {},
                           csrf_from=f"/ui/workflows/pipe/runs/{old['id']}")
    assert status == 200, text_of(page)[:300]
    assert f"re-runs run {old['id']} from its failure" in text_of(page)
    runs = _runs(server, tokens)
    newest = server.get(f"{API}/workflows/pipe/runs/{runs[0]['id']}", token=tokens["reader"]).doc
    assert newest["rerunOf"] == old["id"]


def test_the_rerun_form_refuses_a_token_that_only_reads(served):
    server, tokens, _ = served
    old = _failed(server, tokens)
    ui = Session(server)
    ui.login(tokens["reader"])
    before = _runs(server, tokens)
    status, page = ui.post(f"/ui/workflows/pipe/runs/{old['id']}/rerun", {},
                           csrf_from=f"/ui/workflows/pipe/runs/{old['id']}")
    assert status == 403 and "is not allowed" in text_of(page)
    assert _runs(server, tokens) == before


def test_the_cli_reruns_through_the_server_for_who_may_run(served, tmp_path):
    server, tokens, repo = served
    old = _failed(server, tokens)
    elsewhere = tmp_path  # not the repository: the run is the server's
    refused = cli(None, "workflow", "run", "pipe", "--from-failed", old["id"], "--server", server.url,
                  "--token", tokens["reader"], cwd=elsewhere)
    assert refused.code != 0 and refused.error["code"] == "forbidden", refused
    (repo / "fixed").touch()
    try:
        shown = cli(None, "workflow", "run", "pipe", "--from-failed", old["id"], "--server", server.url,
                    "--token", tokens["runner"], cwd=elsewhere, json=False)
    finally:
        (repo / "fixed").unlink()
    assert shown.code == 0, shown
    assert f"(re-runs run {old['id']})" in shown.stdout and f"kept from run {old['id']}" in shown.stdout
    nameless = cli(None, "workflow", "run", "--from-failed", old["id"], "--server", server.url,
                   "--token", tokens["runner"], cwd=elsewhere)
    assert nameless.code == 2 and "NAME" in nameless.error["error"], nameless
