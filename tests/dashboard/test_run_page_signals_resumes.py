"""The run page over plain HTTP: a signal whose message is refused comes
back in place (the form keeps what was typed, the error beside it, escaped);
a sent signal's message, the run's resumes and the rendered names of forEach
items (`deploy-eu`, not `deploy-${{ self.region }}`) show on the page and in
its graph; the form keeps the front door's CSRF check."""

from __future__ import annotations

import re
import textwrap
import time

import pytest

from tests.dashboard.http import GRANTS, Session, text_of
from tests.dashboard.test_forms_graph_signals import DEPLOY
from tests.helpers import init_repo, ok, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"

FAN = """
jobs:
  - name: main
    steps:
      - name: "deploy-${{ self.region }}"
        forEach: {item: region, in: "${{ ['eu', 'us'] }}"}
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
"""

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("runpage") / "repo")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    write_workflow(repo, "deploy", DEPLOY)
    write_workflow(repo, "fan", FAN)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ops": mint_token(repo, "ops", "--group", "ops", "--user", "alice")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    ops = Session(server)
    ops.login(tokens["ops"])
    yield repo, server, tokens, ops
    server.stop()


def _finished(repo, run_id: str) -> dict:
    end = time.monotonic() + 90
    while True:
        run = ok(repo, "workflow", "history", "get", run_id)
        if run["status"] in ("succeeded", "failed") or time.monotonic() > end:
            return run
        time.sleep(0.5)


def test_a_refused_signal_comes_back_in_place_with_what_was_typed_escaped(served):
    repo, server, tokens, ops = served
    started = server.post(f"{API}/workflows/deploy/run", {}, token=tokens["ops"])
    assert started.status == 200 and started.doc["status"] == "suspended", started.doc
    run_page = f"/ui/workflows/deploy/runs/{started.doc['id']}"

    status, page = ops.post(f"{run_page}/signal", {"step": "main/release", "message": SCRIPT}, csrf_from=run_page)
    assert status == 400
    assert SCRIPT not in page  # what was typed is shown, escaped
    box = re.search(r'data-signal="main/release"(.*?)</form>', page, re.S)
    assert box, "the signal form is on the page again"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;</textarea>" in box.group(1)  # kept as typed
    error = re.search(r'data-role="signal-error">(.*?)</div>', box.group(1), re.S)
    assert error and "not valid JSON" in text_of(error.group(1))

    status, page = ops.post(f"{run_page}/signal", {"step": "main/release", "message": '{"v": 1}'},
                            csrf_from=run_page)
    assert status == 400 and '{&#34;v&#34;: 1}</textarea>' in page and 'data-role="signal-error"' in page

    status, _ = ops.post(f"{run_page}/signal", {"step": "main/release", "message": '{"version": "1"}',
                                                "csrf": "0" * 32})
    assert status == 403  # the front door's CSRF check still holds for this form
    assert ok(repo, "workflow", "history", "get", started.doc["id"])["status"] == "suspended"


def test_the_run_page_shows_the_signal_message_and_the_resumes(served):
    repo, server, tokens, ops = served
    started = server.post(f"{API}/workflows/deploy/run", {}, token=tokens["ops"])
    run_id = started.doc["id"]
    run_page = f"/ui/workflows/deploy/runs/{run_id}"
    status, page = ops.post(f"{run_page}/signal", {"step": "main/release",
                                                   "message": '{"version": "1.4.2", "note": "%s"}' % SCRIPT},
                            csrf_from=run_page)
    assert status == 200, text_of(page)[:400]
    run = _finished(repo, run_id)
    assert run["status"] == "succeeded", run
    _, page = ops.get(run_page)
    shown = re.search(r'data-role="signal-message">(.*?)</pre>', page, re.S)
    assert shown and SCRIPT not in page
    assert "1.4.2" in shown.group(1) and "script" in shown.group(1)  # the message, escaped
    resumes = run.get("resumes") or []
    assert resumes  # the server continued it once the signal came
    assert len(re.findall(r'data-role="resume"', page)) == len(resumes)
    for r in resumes:
        assert r["at"] in page


def test_forEach_items_show_by_their_rendered_names_in_the_graph_and_the_log(served):
    repo, server, tokens, ops = served
    r = server.post(f"{API}/workflows/fan/run", {}, token=tokens["ops"])
    assert r.status == 200 and r.doc["status"] == "succeeded", r.doc
    _, page = ops.get(f"/ui/workflows/fan/runs/{r.doc['id']}")
    graph = re.search(r"<svg .*?</svg>", page, re.S).group(0)
    assert 'class="step-name">deploy-eu, deploy-us<' in graph and "${{" not in text_of(graph)
    log = re.search(r'<pre id="log" class="log">(.*?)</pre>', page, re.S).group(1)
    assert "step main/deploy-eu, deploy-us: 2 item(s)" in log and "${{" not in log
    _, page = ops.get("/ui/workflows/fan")  # before a run: the item it will be, not the expression
    graph = re.search(r"<svg .*?</svg>", page, re.S).group(0)
    assert 'class="step-name">deploy-{region}<' in graph and "${{" not in text_of(graph)


def test_the_graph_names_the_worker_of_each_placed_step():
    from swamp.app.dashboard_queries import step_labels

    doc = {"jobs": [{"name": "main", "steps": [
        {"name": "deploy-eu", "forEachOf": "deploy-${{ self.region }}", "worker": "w2"},
        {"name": "deploy-us", "forEachOf": "deploy-${{ self.region }}", "worker": "w1"},
        {"name": "local", "status": "succeeded"}]}]}
    labels = step_labels(doc)
    assert labels[("main", "deploy-${{ self.region }}")] == {"label": "deploy-eu, deploy-us",
                                                           "workers": ["w1", "w2"]}
    assert labels[("main", "local")] == {"label": None, "workers": []}
