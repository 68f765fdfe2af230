"""Schedules in plain sight (issue 25, item 6): `swamp workflow trigger
list` shows each workflow's schedule (cron, next tick, where it comes from,
its last run); the dashboard's workflows page has a schedule column;
`serve --no-schedules` fires nothing; a --schedule or --webhook naming an
unknown workflow is refused at start; serve's start-up lines list its
schedules and webhooks."""

from __future__ import annotations

import re

from tests.dashboard.http import Session, text_of
from tests.helpers import cli, init_repo, write_workflow
from tests.serve.server import Serve, serve_cli

SECRET = "a-webhook-secret-of-32-characters"

NIGHTLY = """
trigger:
  schedule: "0 3 * * *"
jobs:
  - name: main
    steps:
      - {name: hi, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
"""

EVERY_SECOND = """
trigger:
  schedule: "* * * * * *"
jobs:
  - name: main
    steps:
      - {name: hi, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
"""


def _repo(path):
    repo = init_repo(path)
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "nightly", NIGHTLY)
    write_workflow(repo, "plain", "jobs:\n  - name: main\n    steps:\n"
                                  "      - {name: hi, task: {type: model_method, modelIdOrName: hello, "
                                  "methodName: execute}}\n")
    return repo


def test_trigger_list_shows_each_schedule_with_its_next_tick_and_source(tmp_path):
    repo = _repo(tmp_path / "repo")
    assert cli(repo, "workflow", "trigger", "set", "plain", "--schedule", "30 12 * * 1").code == 0
    rows = cli(repo, "workflow", "trigger", "list")
    assert rows.code == 0, rows
    assert [(r["workflow"], r["schedule"], r["source"]) for r in rows.data] == [
        ("nightly", "0 3 * * *", "file"), ("plain", "30 12 * * 1", "set")]
    nightly = rows.data[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT03:00:00Z", nightly["nextFire"]) and nightly["lastRun"] is None
    human = cli(repo, "workflow", "trigger", "list", json=False)
    assert human.code == 0 and "nightly" in human.stdout and "0 3 * * *" in human.stdout


def test_an_unknown_workflow_in_a_schedule_or_a_webhook_is_refused_at_start(tmp_path):
    repo = _repo(tmp_path / "repo")
    refused = serve_cli(repo, "serve", "--port", "0", "--auth-mode", "none", "--schedule", "n=nightlly@0 3 * * *",
                        "--webhook", "gh=nope", env={"SWAMP_WEBHOOK_GH_SECRET": SECRET}, timeout=60)
    assert refused.code == 2 and refused.error["code"] == "usage", refused
    assert "--schedule n" in refused.error["error"] and "nightlly" in refused.error["error"]
    assert "--webhook gh" in refused.error["error"]
    both = serve_cli(repo, "serve", "--port", "0", "--no-schedules", "--schedule", "n=nightly@0 3 * * *")
    assert both.code == 2 and "--no-schedules" in both.error["error"]


def test_start_up_lines_list_schedules_and_webhooks_and_the_column_shows_them(tmp_path):
    repo = _repo(tmp_path / "repo")
    server = Serve(repo, "--schedule", "early=plain@0 5 * * *", "--webhook", "gh=plain", "--dashboard",
                   env={"SWAMP_WEBHOOK_GH_SECRET": SECRET})
    try:
        status, page = Session(server).get("/ui/workflows")
        assert status == 200 and "0 3 * * *" in text_of(page), text_of(page)[:500]
    finally:
        server.stop()
    log = server.log.read_text()
    assert re.search(r"schedule early: runs plain at '0 5 \* \* \*' \(UTC\), next \S+T05:00:00Z", log), log
    assert "webhook gh: POST /hooks/gh runs plain" in log
    assert re.search(r"schedule trigger-nightly: runs nightly at '0 3 \* \* \*' \(UTC\), next ", log), log


def test_no_schedules_fires_no_trigger(tmp_path):
    repo = _repo(tmp_path / "repo")
    write_workflow(repo, "often", EVERY_SECOND)
    server = Serve(repo, "--no-schedules")
    try:
        # the same request path a trigger's tick would need: a run through the API still works
        ran = server.post("/api/v1/workflows/plain/run")
        assert ran.status == 200 and ran.doc["status"] == "succeeded"
    finally:
        server.stop()
    assert "schedules off (--no-schedules)" in server.log.read_text()
    assert "trigger-often" not in server.log.read_text()
    assert cli(repo, "workflow", "history", "often").data == []
