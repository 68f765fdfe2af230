"""The dashboard in a real browser (headless Chromium) against a real
`swamp serve --dashboard --auth-mode token`: log in with a token, see a
run wait for approval, approve it in the page, see it finish with its log;
a viewer without `approve` sees no button and a forged POST is refused.
Screenshots of the main pages go to the run's tmp output."""

from __future__ import annotations

import re
import textwrap

import pytest

from tests.dashboard.http import GRANTS
from tests.helpers import cli, init_repo
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GATED = """
name: gated
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo first"}}
      - name: fan
        forEach: {item: r, in: ["eu", "us", "ap"]}
        dependsOn: [{step: first}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo ${{ self.r }}"}}
      - name: gate
        dependsOn: [{step: fan}]
        task: {type: manual_approval, prompt: "ship it? <b>really</b>"}
      - name: last
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo shipped"}}
"""




@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("dashboard") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-gated.yaml").write_text(textwrap.dedent(GATED).lstrip())
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ops": mint_token(repo, "ops", "--group", "ops", "--user", "alice"), "viewer": mint_token(repo, "viewer")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield server, tokens
    server.stop()


def start_suspended(server: Serve, token: str) -> str:
    run = server.post(f"{API}/workflows/gated/run", {}, token=token)
    assert run.status == 200 and run.doc["status"] == "suspended", run.doc
    return run.doc["id"]


def login(page, server: Serve, token: str) -> None:
    page.goto(server.url + "/ui/")
    assert page.url.endswith("/ui/login")
    page.fill("input[name=token]", token)
    page.click("button:has-text('Log in')")
    page.wait_for_url(re.compile(r"/ui/workflows$"))


def test_approve_in_the_page_and_watch_the_run_finish(served, browsers, screenshots):
    server, tokens = served
    run_id = start_suspended(server, tokens["ops"])
    ctx = browsers.context()
    page = ctx.new_page()
    login(page, server, tokens["ops"])
    # the token lives in an HttpOnly cookie, never in a URL
    cookies = {c["name"]: c for c in ctx.cookies()}
    assert cookies["swamp_session"]["httpOnly"] and cookies["swamp_session"]["sameSite"] == "Strict"
    assert tokens["ops"] not in page.url and tokens["ops"] not in page.content()
    assert page.evaluate("document.cookie") == ""
    page.screenshot(path=screenshots / "workflows.png", full_page=True)

    page.goto(server.url + "/ui/approvals")
    row = page.locator("tr", has_text=run_id[:8])
    assert "main/gate" in row.inner_text()
    assert "ship it? <b>really</b>" in row.inner_text()  # shown as text, not markup
    page.screenshot(path=screenshots / "approvals.png", full_page=True)

    page.goto(server.url + "/ui/workflows/gated")
    assert page.locator("table.runs tbody tr").count() == 1
    page.screenshot(path=screenshots / "runs.png", full_page=True)
    page.click(f"a:has-text('{run_id[:8]}')")
    gate = page.locator("li.step[data-step='main/gate'] [data-role=status]")
    assert gate.inner_text() == "waiting_approval"
    assert "3 item(s), 3 succeeded" in page.locator("li.group").inner_text()  # forEach grouped
    page.screenshot(path=screenshots / "run-waiting.png", full_page=True)

    box = page.locator("[data-approval='main/gate']")
    box.locator("form[action$='/approve'] input[name=reason]").fill("looks good")
    box.locator("button.approve").click()
    # approved, resumed in the background; the page follows the run live
    page.locator("#run-status", has_text="succeeded").wait_for(timeout=30_000)
    assert page.locator("li.step[data-step='main/last'] [data-role=status]").inner_text() == "succeeded"
    assert "step main/last: succeeded" in page.locator("#log").inner_text()
    assert "approved" in page.locator("li.step[data-step='main/gate']").inner_text()
    page.screenshot(path=screenshots / "run-finished.png", full_page=True)

    record = server.get(f"{API}/workflows/gated/runs/{run_id}", token=tokens["ops"]).doc
    gate_step = next(s for j in record["jobs"] for s in j["steps"] if s["name"] == "gate")
    assert record["status"] == "succeeded" and gate_step["approval"]["reason"] == "looks good"
    page.goto(server.url + "/ui/audit")  # the approval, in the audit view, by the token that gave it
    row = page.locator("table.audit tr", has_text="approveStep").first.inner_text()
    assert "token:ops" in row and "workflow:gated" in row


def test_data_versions_content_and_diff(served, browsers, screenshots):
    server, tokens = served
    for _ in range(2):  # two versions to compare (their times differ); ops may run hello, not change its `run`
        assert server.run_method("hello", "execute", token=tokens["ops"]).status == 200
    page = browsers.context().new_page()
    login(page, server, tokens["ops"])
    page.click("nav >> text=Models and data")
    page.screenshot(path=screenshots / "models.png", full_page=True)
    page.click("a:has-text('result')")
    assert page.locator("table tbody tr").count() >= 2
    page.click("button:has-text('Diff')")
    diff = page.locator("pre.diff").inner_text()
    assert "+" in diff and "-" in diff and "version" in diff
    page.screenshot(path=screenshots / "diff.png", full_page=True)
    page.go_back()
    page.locator("table tbody tr a", has_text=re.compile(r"^v\d+$")).first.click()
    assert '"stdout"' in page.locator("pre.content").inner_text()  # JSON, pretty-printed
    with page.expect_download() as download:
        page.click("a:has-text('download') >> nth=0")
    assert download.value.suggested_filename.startswith("hello-result-v")
    for name in ("datastore", "audit"):
        page.goto(f"{server.url}/ui/{name}")
        page.screenshot(path=screenshots / f"{name}.png", full_page=True)
    audit = page.locator("table.audit").inner_text()  # who ran what, when
    assert "runMethod" in audit and "token:ops" in audit and "model:hello" in audit


def test_a_viewer_sees_no_approve_button_and_forged_posts_are_refused(served, browsers):
    server, tokens = served
    run_id = start_suspended(server, tokens["ops"])
    run_page = f"{server.url}/ui/workflows/gated/runs/{run_id}"
    viewer = browsers.context().new_page()
    login(viewer, server, tokens["viewer"])
    viewer.goto(run_page)
    assert viewer.locator("li.step[data-step='main/gate'] [data-role=status]").inner_text() == "waiting_approval"
    assert viewer.locator("button:has-text('Approve')").count() == 0
    assert viewer.locator("button:has-text('Cancel run')").count() == 0
    viewer.goto(server.url + "/ui/approvals")
    assert viewer.locator("button.approve").count() == 0 and "view only" in viewer.content()

    # the viewer posts the form anyway, with a valid CSRF token: the grants refuse it
    csrf = viewer.locator("input[name=csrf]").first.get_attribute("value")
    form = {"csrf": csrf, "step": "main/gate", "reason": "sneaky"}
    refused = viewer.request.post(f"{run_page}/approve", form=form, max_redirects=0)
    assert refused.status == 403 and "not allowed" in refused.text()

    # someone allowed to approve, tricked into a POST without the page's CSRF token
    ops = browsers.context().new_page()
    login(ops, server, tokens["ops"])
    forged = ops.request.post(f"{run_page}/approve", form={"step": "main/gate"}, max_redirects=0)
    assert forged.status == 403 and "CSRF" in forged.text()
    wrong = ops.request.post(f"{run_page}/approve", form={**form, "csrf": "0" * 64}, max_redirects=0)
    assert wrong.status == 403
    # and the API refuses the viewer too
    api = server.post(f"{API}/workflows/gated/approve", {"step": "main/gate", "runId": run_id},
                      token=tokens["viewer"])
    assert api.status == 403

    record = server.get(f"{API}/workflows/gated/runs/{run_id}", token=tokens["ops"]).doc
    assert record["status"] == "suspended" and record["approvalRequired"][0]["step"] == "gate"
    audit = (server.repo / ".swamp" / "cache" / "serve" / "audit.jsonl").read_text()
    assert tokens["viewer"].split(".", 1)[1] not in audit and tokens["ops"].split(".", 1)[1] not in audit
    # logged out: back to the login page, and the pages need a token again
    viewer.goto(server.url + "/ui/workflows")
    viewer.click("button:has-text('Log out')")
    viewer.wait_for_url(re.compile(r"/ui/login$"))
    viewer.goto(run_page)
    assert viewer.url.endswith("/ui/login")
