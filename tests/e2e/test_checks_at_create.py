"""Checks a user meets before a run: an expression that cannot parse is
refused when a definition is created or validated (naming its field); a
workflow's schema errors come all at once; an array input given as plain
text gets a hint; `workflow schema --json` prints the schema."""

from __future__ import annotations

import json

from tests.helpers import cli, init_repo, ok, write_workflow


def test_model_create_and_validate_refuse_an_expression_that_cannot_parse(tmp_path):
    repo = init_repo(tmp_path / "r")
    r = cli(repo, "model", "create", "command/shell", "bad", "--global-arg", "run=echo ${{ 1 + }}")
    assert r.code != 0 and r.error["code"] == "validation", r
    assert "globalArguments.run" in r.error["error"] and "Traceback" not in r.stderr
    assert not (repo / "models" / "command" / "shell" / "bad.yaml").exists()

    (repo / "models" / "command" / "shell").mkdir(parents=True, exist_ok=True)
    (repo / "models" / "command" / "shell" / "hand.yaml").write_text(
        "type: command/shell\nname: hand\nglobalArguments:\n  run: \"echo ${{ inputs.x +* 2 }}\"\n")
    r = cli(repo, "model", "validate", "hand")
    assert r.code != 0
    (entry,) = r.data["models"]
    assert entry["valid"] is False and any(e.startswith("globalArguments.run:") for e in entry["errors"])
    ok(repo, "model", "create", "command/shell", "good", "--global-arg", "run=echo ${{ 1 + 1 }}")


def test_workflow_validate_names_every_problem_at_once(tmp_path):
    repo = init_repo(tmp_path / "r")
    write_workflow(repo, "two", """
        jobs:
          - name: main
            bogus: 1
            steps:
              - name: s
                task: {type: model_method, modelIdOrName: hello}
              - name: t
                task: {type: model_method, modelIdOrName: hello, methodName: "${{ 1 + }}"}
    """)
    r = cli(repo, "workflow", "validate", "two")
    assert r.code != 0 and "Traceback" not in r.stderr
    text = json.dumps(r.data)
    assert "needs methodName" in text and "bogus" in text


def test_an_array_input_given_as_text_gets_a_hint_and_schema_json_is_the_schema(tmp_path):
    repo = init_repo(tmp_path / "r")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    write_workflow(repo, "arr", """
        inputs:
          properties:
            regions: {type: array, items: {type: string}}
        jobs:
          - name: main
            steps:
              - name: s
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """)
    r = cli(repo, "workflow", "run", "arr", "--input", "regions=eu")
    assert r.code != 0 and "regions" in r.error["error"]
    assert """--input 'regions=["eu", "us"]'""" in r.error["hint"]
    assert ok(repo, "workflow", "run", "arr", "--input", 'regions=["eu"]')["status"] == "succeeded"

    schema = cli(repo, "workflow", "schema", "--json")
    assert schema.code == 0 and "jobs" in schema.data["properties"]
    assert cli(repo, "workflow", "schema", "get", "--json").data == schema.data
