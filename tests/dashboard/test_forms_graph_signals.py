"""Over plain HTTP (no browser): the run form built from a workflow's
declared inputs (types, choices, defaults, required; the server checks
what is sent and shows each problem next to its field, starting nothing);
the graph of a workflow's jobs and steps, coloured by status on a run; and
a step waiting for a signal, signalled from the run page (`approve`
needed), listed on the approvals page."""

from __future__ import annotations

import re
import textwrap
import time

import pytest

from tests.dashboard.http import GRANTS, Session, text_of
from tests.helpers import init_repo, ok, write_workflow
from tests.serve.server import Serve, mint_token

TYPED = """
inputs:
  properties:
    region: {type: string, enum: [eu, us], description: where it goes}
    count: {type: integer, minimum: 1, maximum: 5, default: 2}
    dry: {type: boolean}
    tags: {type: array, items: {type: string}}
    note: {type: string, pattern: "^[a-z]+$"}
  required: [region, note]
jobs:
  - name: build
    steps:
      - name: compile
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo got ${{ inputs.region }}-${{ inputs.count + 1 }}-${{ size(inputs.tags) }}-${{ inputs.dry == true }}"}}
      - name: test
        dependsOn: [{step: compile}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo test"}}
      - name: lint
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo lint"}}
  - name: ship
    dependsOn: [{job: build}]
    steps:
      - name: push
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo push"}}
      - name: cleanup
        dependsOn: [{step: push, condition: {type: completed}}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo cleanup"}}
"""

DEPLOY = """
jobs:
  - name: main
    steps:
      - name: release
        task:
          type: wait_for_signal
          prompt: which <version>?
          schema: {type: object, required: [version], properties: {version: {type: string}}}
      - name: ship
        dependsOn: [{step: release}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo shipping ${{ steps.release.signal.version }}"}}
"""

API = "/api/v1"



@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("forms") / "repo")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    write_workflow(repo, "typed", TYPED)
    write_workflow(repo, "deploy", DEPLOY)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ops": mint_token(repo, "ops", "--group", "ops", "--user", "alice"), "viewer": mint_token(repo, "viewer")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    ops, viewer = Session(server), Session(server)
    ops.login(tokens["ops"])
    viewer.login(tokens["viewer"])
    yield repo, server, tokens, ops, viewer
    server.stop()


def _runs(server, token, name) -> list[dict]:
    r = server.get(f"{API}/workflows/{name}/runs", token=token)
    assert r.status == 200, r.doc
    return r.doc


def _error_for(page: str, field: str) -> str:
    m = re.search(r'data-error-for="%s">([^<]*)<' % re.escape(field), page)
    assert m, f"no error place for {field}"
    return m.group(1)


def test_the_run_form_has_a_field_per_declared_input(served):
    _, _, _, ops, viewer = served
    status, page = ops.get("/ui/workflows/typed")
    assert status == 200
    region = re.search(r'<select id="[^"]+" name="in.region" required>(.*?)</select>', page, re.S)
    assert region and re.findall(r">(\w+)</option>", region.group(1)) == ["eu", "us"]  # its choices
    assert re.search(r'<input type="number" [^>]*name="in.count" value="2" step="1" min="1" max="5"', page)
    assert re.search(r'<select [^>]*name="in.dry"', page) and ">true<" in page and ">false<" in page
    assert re.search(r'<textarea [^>]*name="in.tags"[^>]*data-json', page)
    assert re.search(r'name="in.note"[^>]*data-pattern="\^\[a-z\]\+\$"[^>]*required', page)
    assert "where it goes" in page  # the description
    _, page = viewer.get("/ui/workflows/typed")
    assert 'name="in.region"' not in page  # no run grant, no form


def test_the_server_refuses_bad_inputs_next_to_their_fields_and_starts_nothing(served):
    _, server, tokens, ops, _ = served
    before = len(_runs(server, tokens["ops"], "typed"))
    status, page = ops.post("/ui/workflows/typed/run",
                            {"in.region": '"mars"', "in.count": "9", "in.dry": "maybe", "in.tags": "[1,",
                             "in.note": "Not Lower"}, csrf_from="/ui/workflows/typed")
    assert status == 400
    assert "must be one of" in _error_for(page, "region")
    assert _error_for(page, "count") == "must be at most 5"
    assert "not a valid boolean" in _error_for(page, "dry")
    assert "not valid JSON" in _error_for(page, "tags")
    assert "must match" in _error_for(page, "note")
    assert 'value="9"' in page and "Not Lower" in page  # what was typed stays in the form
    status, page = ops.post("/ui/workflows/typed/run", {"in.count": "3"}, csrf_from="/ui/workflows/typed")
    assert status == 400 and _error_for(page, "region") == "required" and _error_for(page, "note") == "required"
    status, page = ops.post("/ui/workflows/typed/run", {"in.region": '"eu"', "in.note": "ok", "in.tags": '["a", 2]'},
                            csrf_from="/ui/workflows/typed")
    assert status == 400 and "expected string" in _error_for(page, "tags")
    time.sleep(1)
    assert len(_runs(server, tokens["ops"], "typed")) == before


def test_typed_inputs_reach_the_run_and_the_graph_shows_its_steps(served):
    repo, server, tokens, ops, _ = served
    status, page = ops.post("/ui/workflows/typed/run",
                            {"in.region": '"us"', "in.count": "3", "in.dry": "true", "in.tags": '["a", "b"]',
                             "in.note": "hello"}, csrf_from="/ui/workflows/typed")
    assert status == 200, text_of(page)[:400]
    assert "typed run " in text_of(page)  # the new run's own page
    end = time.monotonic() + 60
    while True:
        runs = _runs(server, tokens["ops"], "typed")
        if runs and runs[0]["status"] == "succeeded" or time.monotonic() > end:
            break
        time.sleep(0.3)
    run = ok(repo, "workflow", "history", "get", runs[0]["id"])
    assert run["status"] == "succeeded"
    compile_ = next(s for j in run["jobs"] for s in j["steps"] if s["name"] == "compile")
    version = next(a["version"] for a in compile_["dataArtifacts"] if a["name"] == "result")
    content = ok(repo, "data", "get", "hello", "result", "--version", str(version))["content"]
    assert "got us-4-2-true" in str(content)  # an integer, an array and a boolean, typed as declared

    _, page = ops.get("/ui/workflows/typed")  # the workflow's graph: no statuses
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="graph"' in page
    steps = set(re.findall(r'<g class="step" data-step="([^"]+)"', page))
    assert steps == {"build/compile", "build/test", "build/lint", "ship/push", "ship/cleanup"}
    edges = re.findall(r'class="edge([^"]*)" marker-end="url\(#arrow\)" data-edge="([^"]+)"', page)
    assert ("", "compile>test") in edges and (" job-edge", "build>ship") in edges
    assert (" conditional", "push>cleanup") in edges  # a dependency on completed, not succeeded
    _, page = ops.get(f"/ui/workflows/typed/runs/{run['id']}")  # a run's graph: each step coloured by its status
    coloured = {step: status for status, step in re.findall(r'<g class="step s-(\w+)" data-step="([^"]+)"', page)}
    assert coloured == {s: "succeeded" for s in steps}


def test_a_signal_sent_from_the_run_page_lets_the_run_finish(served):
    repo, server, tokens, ops, viewer = served
    started = server.post(f"{API}/workflows/deploy/run", {}, token=tokens["ops"])
    assert started.status == 200 and started.doc["status"] == "suspended", started.doc
    run_id = started.doc["id"]
    run_page = f"/ui/workflows/deploy/runs/{run_id}"

    _, page = ops.get(run_page)
    assert 'data-signal="main/release"' in page and "which &lt;version&gt;?" in page
    assert f'action="/ui/workflows/deploy/runs/{run_id}/signal"' in page
    assert re.search(r'<g class="step s-waiting_signal" data-step="main/release"', page)
    _, page = viewer.get(run_page)
    assert 'data-signal="main/release"' in page and "/signal\"" not in page and "it needs approve" in page

    _, page = ops.get("/ui/approvals")  # listed with the approvals
    row = re.search(r'<tr data-signal="main/release">(.*?)</tr>', page, re.S)
    assert row and run_id[:8] in row.group(1) and "waiting" in row.group(1) and "/signal" in row.group(1)
    _, page = viewer.get("/ui/approvals")
    assert '<tr data-signal="main/release">' in page and "view only" in page

    status, page = viewer.post(f"{run_page}/signal", {"step": "main/release", "message": '{"version": "9"}'},
                               csrf_from=run_page)
    assert status == 403
    status, page = ops.post(f"{run_page}/signal", {"step": "main/release", "message": "{version"},
                            csrf_from=run_page)
    assert status == 400 and "not valid JSON" in text_of(page) and "Traceback" not in page
    status, page = ops.post(f"{run_page}/signal", {"step": "main/release", "message": '{"v": 1}'},
                            csrf_from=run_page)
    assert status == 400 and "version" in text_of(page)  # the step's schema refuses it: nothing recorded
    status, page = ops.post(f"{run_page}/signal", {"step": "main/release", "message": '{"version": "1.4.2"}'},
                            csrf_from=run_page)
    assert status == 200, text_of(page)[:400]

    end = time.monotonic() + 90  # the server resumes a signalled run by itself
    while True:
        run = ok(repo, "workflow", "history", "get", run_id)
        if run["status"] in ("succeeded", "failed") or time.monotonic() > end:
            break
        time.sleep(0.5)
    assert run["status"] == "succeeded", run
    step = next(s for j in run["jobs"] for s in j["steps"] if s["name"] == "release")
    assert step["signal"]["message"] == {"version": "1.4.2"} and step["signal"]["by"] == "token:ops (user:alice)"
    _, page = ops.get(run_page)
    assert "<strong>signalled</strong> by token:ops" in page and "data-signal=" not in page
    status, page = ops.post(f"{run_page}/signal", {"step": "main/release", "message": '{"version": "2"}'},
                            csrf_from=run_page)
    assert status in (404, 409) and "Traceback" not in page
