"""Reports: what runs after a method or workflow run and is stored as
versioned data of the run (docs/reports.md), through the `swamp` command."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.helpers import cli, datastore_root, init_repo, ok, write_shell, write_workflow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "hello", """
        type: command/shell
        name: hello
        globalArguments:
          run: echo hello
    """)
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        globalArguments:
          run: echo going down; exit 3
    """)
    write_workflow(repo, "deploy", """
        reports: [workflow-summary]
        jobs:
          - name: main
            steps:
              - name: greet
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """)
    write_workflow(repo, "broken", """
        reports: [workflow-summary]
        jobs:
          - name: main
            steps:
              - name: greet
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
              - name: explode
                dependsOn: []
                task: {type: model_method, modelIdOrName: boom, methodName: execute}
    """)
    return repo


def _write_ext(repo: Path, folder: str, filename: str, source: str) -> None:
    path = repo / "extensions" / folder / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())


def test_workflow_run_stores_its_summary_report(repo):
    run = ok(repo, "workflow", "run", "deploy")
    assert run["status"] == "succeeded"
    assert [(r["report"], r["status"], r["version"]) for r in run["reports"]] == \
        [("workflow-summary", "succeeded", 1)]

    doc = ok(repo, "report", "get", "workflow-summary", "--workflow", "deploy")
    assert doc["runId"] == run["id"] and doc["status"] == "succeeded" and doc["runStatus"] == "succeeded"
    summary = doc["json"]
    assert [(s["job"], s["step"], s["status"]) for s in summary["steps"]] == [("main", "greet", "succeeded")]
    assert {d["name"] for d in summary["steps"][0]["data"]} == {"log", "result"}
    assert summary["failures"] == []

    md = cli(repo, "report", "get", "workflow-summary", "--workflow", "deploy", json=False)
    assert md.code == 0, md
    assert md.stdout.startswith("# Workflow deploy: succeeded") and "| main | greet | succeeded |" in md.stdout

    rows = ok(repo, "report", "list", "--workflow", "deploy")
    assert [(r["report"], r["runId"], r["version"]) for r in rows] == [("workflow-summary", run["id"], 1)]
    # it is versioned data: a second run adds version 2, get gives the latest, --run picks one
    second = ok(repo, "workflow", "run", "deploy")
    assert ok(repo, "report", "get", "workflow-summary", "--workflow", "deploy")["runId"] == second["id"]
    assert ok(repo, "report", "get", "workflow-summary", "--workflow", "deploy", "--run", run["id"])["version"] == 1
    assert [r["version"] for r in ok(repo, "report", "list", "--workflow", "deploy")] == [2, 1]


def test_a_failed_run_still_gets_its_report(repo):
    r = cli(repo, "workflow", "run", "broken")
    assert r.code == 1, r
    assert r.data["status"] == "failed"
    assert r.data["reports"][0]["status"] == "succeeded"
    doc = ok(repo, "report", "get", "workflow-summary", "--workflow", "broken")
    assert doc["runStatus"] == "failed"
    assert [f["step"] for f in doc["json"]["failures"]] == ["explode"]
    assert "## Failures" in doc["markdown"] and "explode" in doc["markdown"]


def test_skip_reports_and_skip_report(repo):
    for flags in (["--skip-reports"], ["--skip-report", "workflow-summary"]):
        run = ok(repo, "workflow", "run", "deploy", *flags)
        assert "reports" not in run
    assert ok(repo, "report", "list", "--workflow", "deploy") == []
    # --skip-reports wins over --report too
    run = ok(repo, "workflow", "run", "deploy", "--report", "workflow-summary", "--skip-reports")
    assert "reports" not in run


def test_method_run_with_report_option(repo):
    rec = ok(repo, "model", "method", "run", "hello", "execute", "--report", "method-summary")
    assert rec["status"] == "succeeded"
    assert rec["reports"] == [{"report": "method-summary", "status": "succeeded",
                               "dataName": "report-method-summary", "version": 1}]
    doc = ok(repo, "report", "get", "method-summary", "--model", "hello")
    assert doc["runId"] == rec["id"]
    assert {d["name"] for d in doc["json"]["data"]} == {"log", "result"}
    # stored as the model's data, next to what the method wrote
    versions = ok(repo, "data", "versions", "hello", "report-method-summary")
    assert len(versions) == 1
    # without --report nothing runs: no report is the default
    assert "reports" not in ok(repo, "model", "method", "run", "hello", "execute")


def test_definition_reports_run_by_default_and_a_failed_method_gets_one(repo):
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        reports: [method-summary]
        globalArguments:
          run: echo going down; exit 3
    """)
    r = cli(repo, "model", "method", "run", "boom", "execute")
    assert r.code == 1, r
    assert r.data["status"] == "failed" and r.data["reports"][0]["status"] == "succeeded"
    doc = ok(repo, "report", "get", "method-summary", "--model", "boom")
    assert doc["runStatus"] == "failed" and doc["json"]["error"]
    assert "## Error" in doc["markdown"]


def test_custom_local_report_types_run(repo):
    _write_ext(repo, "reports", "greeting.py", """
        from swamp.reports.api import Report, ReportType

        greeting = ReportType("greeting-count", scope="workflow", description="How many greetings")

        @greeting.render
        def render(ctx):
            outputs = [ctx.read(d).decode() for d in ctx.data if d["name"] == "result"]
            return Report(markdown=f"{len(outputs)} greeting(s)\\n", data={"greetings": len(outputs),
                                                                         "steps": len(ctx.run["jobs"][0]["steps"])})
    """)
    # next to model types, in extensions/models/*.py, a report is found too
    _write_ext(repo, "models", "extras.py", """
        from swamp.reports.api import ReportType

        def _render(ctx):
            return {"model": ctx.model_name, "status": ctx.status}

        echo = ReportType("echo-status", scope="method", render=_render)
    """)
    found = {r["name"]: r for r in ok(repo, "report", "search")}
    assert {"method-summary", "workflow-summary", "greeting-count", "echo-status"} <= set(found)
    assert found["greeting-count"]["source"] == "extensions/reports/greeting.py"
    assert ok(repo, "report", "describe", "greeting-count")["scope"] == "workflow"

    ok(repo, "workflow", "run", "deploy", "--report", "greeting-count")
    doc = ok(repo, "report", "get", "greeting-count", "--workflow", "deploy")
    assert doc["json"] == {"greetings": 1, "steps": 1} and doc["markdown"] == "1 greeting(s)\n"

    ok(repo, "model", "method", "run", "hello", "execute", "--report", "echo-status")
    assert ok(repo, "report", "get", "echo-status", "--model", "hello")["json"] == \
        {"model": "hello", "status": "succeeded"}


def test_a_report_that_raises_is_recorded_and_the_run_is_unchanged(repo):
    _write_ext(repo, "reports", "bad.py", """
        from swamp.reports.api import ReportType

        bad = ReportType("bad", scope="method")

        @bad.render
        def render(ctx):
            raise RuntimeError("report blew up")
    """)
    r = cli(repo, "model", "method", "run", "hello", "execute", "--report", "bad", "--report", "method-summary")
    assert r.code == 0, r
    rec = r.data
    assert rec["status"] == "succeeded"
    assert {a["name"] for a in rec["dataArtifacts"]} == {"log", "result"}
    outcomes = {o["report"]: o for o in rec["reports"]}
    assert outcomes["bad"]["status"] == "failed" and "report blew up" in outcomes["bad"]["error"]
    assert outcomes["method-summary"]["status"] == "succeeded"  # one failing report stops no other
    doc = ok(repo, "report", "get", "bad", "--model", "hello")
    assert doc["status"] == "failed" and "RuntimeError: report blew up" in doc["error"]
    human = cli(repo, "report", "get", "bad", "--model", "hello", json=False)
    assert human.code == 0 and "report bad failed" in human.stdout
    # the method's own data is there, as if no report had run
    assert ok(repo, "data", "get", "hello", "result")["version"] == 1
    # and in a workflow: the run's outcome stays succeeded
    bad_wf = repo / "extensions" / "reports" / "bad_wf.py"
    bad_wf.write_text("from swamp.reports.api import ReportType\n"
                      "b = ReportType('bad-wf', scope='workflow', render=lambda ctx: 42)\n")
    run = ok(repo, "workflow", "run", "deploy", "--report", "bad-wf")
    assert run["status"] == "succeeded"
    assert {o["report"]: o["status"] for o in run["reports"]} == {"workflow-summary": "succeeded",
                                                                  "bad-wf": "failed"}


def test_bad_report_names_are_refused_before_anything_runs(repo):
    outputs = datastore_root(repo) / "outputs"
    r = cli(repo, "model", "method", "run", "hello", "execute", "--report", "method-sumary")
    assert r.code == 1, r
    err = r.error
    assert err["code"] == "not_found" and "method-sumary" in err["error"] and "method-summary" in err["hint"]
    assert "Traceback" not in r.stderr
    assert not outputs.exists() or not any(outputs.rglob("*.yaml"))

    r = cli(repo, "workflow", "run", "deploy", "--report", "method-summary")
    assert r.code == 1 and "runs after method runs" in r.error["error"]
    r = cli(repo, "workflow", "run", "deploy", "--skip-report", "nope")
    assert r.code == 1 and r.error["code"] == "not_found"
    assert ok(repo, "report", "list", "--workflow", "deploy") == []

    r = cli(repo, "report", "describe", "nope")
    assert r.code == 1 and r.error["code"] == "not_found"
    r = cli(repo, "report", "get", "workflow-summary", "--workflow", "deploy")
    assert r.code == 1 and r.error["code"] == "not_found" and "--report workflow-summary" in r.error["hint"]
    r = cli(repo, "report", "list", "--model", "hello", "--workflow", "deploy")
    assert r.code == 2 and "--model MODEL or --workflow WORKFLOW" in r.error["error"]
    r = cli(repo, "report", "list", "--workflow", "nosuch")
    assert r.code == 1 and r.error["code"] == "not_found"


def test_reports_on_a_shared_datastore_reach_the_other_peer(tmp_path, seaweedfs):
    from tests.helpers import peer_from_git, popen, s3_setup_args

    args = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(a, "datastore", "setup", *args)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *args)
    for peer in (a, b):
        write_workflow(peer, "deploy", """
            reports: [workflow-summary]
            jobs:
              - name: main
                steps:
                  - name: greet
                    task: {type: model_method, modelIdOrName: hello, methodName: execute}
        """)
    run = ok(a, "workflow", "run", "deploy")
    assert run["reports"][0]["status"] == "succeeded" and "published" not in run
    rec = ok(a, "model", "method", "run", "hello", "execute", "--report", "method-summary")
    # b reads them: the reads pull first
    assert ok(b, "report", "get", "workflow-summary", "--workflow", "deploy")["runId"] == run["id"]
    assert ok(b, "report", "get", "method-summary", "--model", "hello")["runId"] == rec["id"]
    # both peers run the workflow at once: each report is its own version, none lost
    procs = [popen(p, "workflow", "run", "deploy") for p in (a, b)]
    ids = set()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        ids.add(json.loads(out)["id"])
    ok(a, "datastore", "sync")
    rows = ok(a, "report", "list", "--workflow", "deploy")
    assert sorted(r["version"] for r in rows) == [1, 2, 3]
    assert ids <= {r["runId"] for r in rows}


def test_prune_orphans_keeps_a_live_workflows_reports(repo):
    ok(repo, "workflow", "run", "deploy")
    assert ok(repo, "data", "prune", "--orphans", "--dry-run")["deleted"] == []
    ok(repo, "data", "prune", "--orphans", "-y")
    assert len(ok(repo, "report", "list", "--workflow", "deploy")) == 1


def test_a_run_restarted_with_resume_gets_its_reports(repo):
    r = cli(repo, "workflow", "run", "broken", "--skip-reports")
    assert r.code == 1 and "reports" not in r.data
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        globalArguments:
          run: echo fixed
    """)
    bad = cli(repo, "workflow", "resume", "broken", "--from", "explode", "--report", "nope")
    assert bad.code == 1 and bad.error["code"] == "not_found"  # refused: the run is left as it was
    resumed = cli(repo, "workflow", "resume", "broken", "--from", "explode")
    assert resumed.code == 0, resumed
    assert resumed.data["reports"][0]["status"] == "succeeded"
    doc = ok(repo, "report", "get", "workflow-summary", "--workflow", "broken")
    assert doc["runId"] == r.data["id"] and doc["runStatus"] == "succeeded"


def test_reports_of_a_type_run_directly(repo):
    rec = ok(repo, "model", "method", "run", "command/shell", "execute", "greet", "--input", "run=echo hi",
             "--report", "method-summary")
    assert rec["reports"][0]["status"] == "succeeded"
    assert ok(repo, "report", "get", "method-summary", "--model", "greet")["runId"] == rec["id"]


def test_report_list_without_an_owner_lists_every_one(repo):
    ok(repo, "workflow", "run", "deploy")
    ok(repo, "model", "method", "run", "hello", "execute", "--report", "method-summary")
    rows = ok(repo, "report", "list")
    assert [(r["owner"], r["report"]) for r in rows] == [("hello", "method-summary"), ("deploy", "workflow-summary")]
    assert ok(repo, "report", "list", "--report", "method-summary")[0]["owner"] == "hello"
