"""In headless Chromium: the typed run form refuses a bad value in the page
(next to its field, nothing sent), then starts a run with typed values; the
graph of a workflow and of a run; a signal typed in the run page lets the
run finish, followed live. Screenshots of each go to the run's tmp output."""

from __future__ import annotations

import re

import pytest

from tests.dashboard.test_forms_graph_signals import DEPLOY, TYPED
from tests.helpers import init_repo, ok, write_workflow
from tests.serve.server import Serve

API = "/api/v1"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("browser-forms") / "repo")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    write_workflow(repo, "typed", TYPED)
    write_workflow(repo, "deploy", DEPLOY)
    server = Serve(repo, "--dashboard")
    yield repo, server
    server.stop()


def test_the_typed_form_checks_in_the_page_then_runs(served, browsers, screenshots):
    repo, server = served
    page = browsers.context().new_page()
    sent = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    page.goto(server.url + "/ui/workflows/typed")
    assert page.locator("svg.graph g.step").count() == 5  # the workflow's graph
    page.fill("input[name='in.count']", "9")
    page.fill("textarea[name='in.tags']", "[1,")
    page.fill("input[name='in.note']", "Not Lower")
    page.click("form.typed button[type=submit]")
    assert page.locator("[data-error-for='region']").inner_text() != ""  # required, nothing chosen
    assert page.locator("[data-error-for='count']").inner_text() != ""  # over its maximum
    assert "JSON" in page.locator("[data-error-for='tags']").inner_text()
    assert "must match" in page.locator("[data-error-for='note']").inner_text()
    assert sent == []  # refused in the page: nothing was sent
    page.screenshot(path=screenshots / "run-form-refused.png", full_page=True)

    page.select_option("select[name='in.region']", label="us")
    page.fill("input[name='in.count']", "3")
    page.select_option("select[name='in.dry']", "true")
    page.fill("textarea[name='in.tags']", '["a", "b"]')
    page.fill("input[name='in.note']", "hello")
    page.click("form.typed button[type=submit]")
    page.wait_for_url(re.compile(r"/ui/workflows/typed/runs/[0-9a-f-]+$"))  # the new run's page
    assert len(sent) == 1
    page.locator("#run-status", has_text="succeeded").wait_for(timeout=30_000)
    assert page.locator("svg.graph g.step.s-succeeded").count() == 5  # the run's graph, coloured
    page.screenshot(path=screenshots / "run-graph.png", full_page=True)


def test_a_signal_typed_in_the_run_page_lets_the_run_finish(served, browsers, screenshots):
    repo, server = served
    run = server.post(f"{API}/workflows/deploy/run", {})
    assert run.status == 200 and run.doc["status"] == "suspended", run.doc
    page = browsers.context().new_page()
    page.goto(server.url + f"/ui/workflows/deploy/runs/{run.doc['id']}")
    assert page.locator("svg.graph g.step[data-step='main/release']").get_attribute("data-status") == "waiting_signal"
    box = page.locator("[data-signal='main/release']")
    assert "which <version>?" in box.inner_text()
    page.screenshot(path=screenshots / "run-waiting-signal.png", full_page=True)
    box.locator("textarea[name=message]").fill('{"version": "1.4.2"}')
    box.locator("button", has_text="Send signal").click()
    page.locator("#run-status", has_text="succeeded").wait_for(timeout=60_000)
    assert "signalled" in page.locator("li.step[data-step='main/release']").inner_text()
    page.goto(server.url + "/ui/approvals")
    assert page.locator("tr[data-signal]").count() == 0
