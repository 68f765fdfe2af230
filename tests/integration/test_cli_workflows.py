"""The workflow commands upstream's users reach for beyond run: history
get|search|logs by run id, approvals, delete, edit, schema get and the
list aliases."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, on_a_terminal

GATED = """\
name: gated
jobs:
  - name: j
    steps:
      - {name: gate, task: {type: manual_approval, prompt: "ship it?"}}
      - name: after
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: hi, methodName: execute}
"""
PLAIN = """\
name: plain
jobs:
  - name: j
    steps:
      - {name: s, task: {type: model_method, modelIdOrName: hi, methodName: execute}}
"""


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    assert cli(r, "model", "create", "command/shell", "hi", "--global-arg", "run=echo hi").code == 0
    (r / "workflows" / "workflow-gated.yaml").write_text(GATED)
    (r / "workflows" / "workflow-plain.yaml").write_text(PLAIN)
    return r


def test_history_by_name_and_by_run_id(repo):
    plain = cli(repo, "workflow", "run", "plain").data
    gated = cli(repo, "workflow", "run", "gated").data
    assert [r["id"] for r in cli(repo, "workflow", "history", "plain").data] == [plain["id"]]
    every = cli(repo, "workflow", "history", "search").data
    assert [r["id"] for r in every] == [gated["id"], plain["id"]]  # newest first
    assert [r["id"] for r in cli(repo, "workflow", "history", "search", "--status", "suspended").data] == [gated["id"]]
    assert cli(repo, "workflow", "history", "get", plain["id"][:8]).data["workflowName"] == "plain"
    assert "step j/s: succeeded" in cli(repo, "workflow", "history", "logs", plain["id"]).data["log"]
    assert cli(repo, "workflow", "history", "get", "zzzzzzzz").code == 1


def test_approvals_list_what_waits(repo):
    gated = cli(repo, "workflow", "run", "gated").data
    waiting = cli(repo, "workflow", "approvals").data
    assert [(w["workflowName"], w["runId"], w["step"], w["prompt"]) for w in waiting] == [
        ("gated", gated["id"], "gate", "ship it?")]
    assert cli(repo, "workflow", "approve", "gated", "gate").code == 0
    assert cli(repo, "workflow", "approvals", "gated").data == []


def test_delete_is_refused_while_a_run_waits_unless_forced(repo):
    cli(repo, "workflow", "run", "gated")
    refused = cli(repo, "workflow", "delete", "gated", "-y")
    assert refused.code == 1 and refused.error["code"] == "conflict" and "--force" in refused.error["hint"]
    done = cli(repo, "workflow", "delete", "gated", "-y", "--force")
    assert done.code == 0 and done.data["deletedRuns"] == 1
    assert not (repo / "workflows" / "workflow-gated.yaml").exists()
    assert cli(repo, "workflow", "history", "search").data == []
    cli(repo, "workflow", "run", "plain")
    assert cli(repo, "workflow", "delete", "plain", "-y").code == 0  # finished runs do not hold it back


def test_edit_schema_and_list_aliases(repo, tmp_path):
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/name: s,/name: renamed,/' \"$1\"\n")
    editor.chmod(0o755)
    shown = on_a_terminal(["workflow", "edit", "plain", "--repo-dir", str(repo)], env={"EDITOR": str(editor)})
    assert "ok" in shown
    assert "renamed" in (repo / "workflows" / "workflow-plain.yaml").read_text()
    schema = cli(repo, "workflow", "schema", "get").data
    assert "jobs" in schema["properties"]
    assert [w["name"] for w in cli(repo, "workflow", "list").data] == ["gated", "plain"]
    assert [m["name"] for m in cli(repo, "model", "list").data] == ["hi"]


def test_run_search_finds_past_runs_and_a_workflow_named_search_still_runs(repo):
    plain = cli(repo, "workflow", "run", "plain").data
    gated = cli(repo, "workflow", "run", "gated").data
    assert [r["id"] for r in cli(repo, "workflow", "run", "search").data] == [gated["id"], plain["id"]]
    assert [r["id"] for r in cli(repo, "workflow", "run", "search", "pla").data] == [plain["id"]]
    assert [r["id"] for r in cli(repo, "workflow", "run", "search", gated["id"][:8]).data] == [gated["id"]]
    assert [r["id"] for r in cli(repo, "workflow", "run", "search", "--status", "suspended").data] == [gated["id"]]
    assert cli(repo, "workflow", "run", "search", "--workflow", "plain", "--limit", "1").data[0]["id"] == plain["id"]
    assert cli(repo, "workflow", "run", "search", "--workflow", "nope").code == 1
    # "search" is a subcommand; a workflow of that name runs when an option comes first.
    (repo / "workflows" / "workflow-search.yaml").write_text(PLAIN.replace("name: plain", "name: search"))
    ran = cli(repo, "workflow", "run", "--fail-on", "low", "search")
    assert ran.code == 0 and ran.data["workflowName"] == "search"
