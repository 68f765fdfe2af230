"""Inputs as upstream's users write them (CLI.md "Inputs"): dotted keys
nest, KEY:json parses JSON, KEY=@FILE reads a file and \\@ keeps a literal
'@'; --stdin takes one JSON object (one run) or NDJSON (one run a line,
versions contiguous), never together with --input-file, never empty."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli, init_repo, write_type

ECHO = '''
from pydantic import BaseModel
from swamp import Context, ModelType

class Args(BaseModel):
    note: str = ""
    count: int = 0
    conf: dict = {}
    tags: list = []

class Out(BaseModel):
    note: str
    count: int
    conf: dict
    tags: list

echo = ModelType("acme/echo", version="2026.11.30.1", global_arguments=Args)
echo.resource("out", schema=Out, lifetime="infinite", garbage_collection=100)

@echo.method(description="Write the arguments back")
def write(args: Args, ctx: Context) -> None:
    ctx.write_resource("out", "out", Out(**args.model_dump()))
'''


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    write_type(r, "echo.py", ECHO)
    assert cli(r, "model", "create", "acme/echo", "e").code == 0
    return r


def _out(repo, version=None):
    args = ["data", "get", "e", "out"] + (["--version", str(version)] if version else [])
    return cli(repo, *args).data["content"]


def test_dotted_keys_nest_and_json_keys_parse(repo, tmp_path):
    r = cli(repo, "model", "method", "run", "e", "write", "--input", "conf.region=eu",
            "--input", "conf.size:json=3", "--input", "tags:json=[\"a\", 1]", "--input", "count=4")
    assert r.code == 0, r
    assert _out(repo) == {"note": "", "count": 4, "conf": {"region": "eu", "size": 3}, "tags": ["a", 1]}
    bad = cli(repo, "model", "method", "run", "e", "write", "--input", "tags:json=[oops")
    assert bad.code == 2 and "not valid JSON" in bad.error["error"]


def test_at_reads_a_file_and_backslash_at_is_literal(repo, tmp_path):
    (tmp_path / "n.txt").write_text("from a file")
    assert cli(repo, "model", "method", "run", "e", "write", "--input", f"note=@{tmp_path}/n.txt").code == 0
    assert _out(repo)["note"] == "from a file"
    assert cli(repo, "model", "method", "run", "e", "write", "--input", "note=\\@handle").code == 0
    assert _out(repo)["note"] == "@handle"


def test_stdin_ndjson_is_one_run_a_line_with_contiguous_versions(repo):
    lines = "\n".join(json.dumps({"note": f"n{i}", "count": i}) for i in range(3)) + "\n"
    r = cli(repo, "model", "method", "run", "e", "write", "--stdin", input=lines)
    assert r.code == 0, r
    records = r.data
    assert [rec["status"] for rec in records] == ["succeeded"] * 3
    assert [rec["dataArtifacts"][0]["version"] for rec in records] == [1, 2, 3]
    assert [_out(repo, v)["note"] for v in (1, 2, 3)] == ["n0", "n1", "n2"]
    one = cli(repo, "model", "method", "run", "e", "write", "--stdin", input='{"note": "single"}')
    assert one.code == 0 and isinstance(one.data, dict) and _out(repo)["note"] == "single"


def test_stdin_is_refused_when_empty_or_with_an_input_file(repo, tmp_path):
    empty = cli(repo, "model", "method", "run", "e", "write", "--stdin", input="")
    assert empty.code == 2 and "--stdin got nothing" in empty.error["error"]
    (tmp_path / "i.yaml").write_text("note: x\n")
    both = cli(repo, "model", "method", "run", "e", "write", "--stdin", "--input-file", str(tmp_path / "i.yaml"),
               input='{"note": "y"}')
    assert both.code == 2 and "use one" in both.error["error"]
    bad_line = cli(repo, "model", "method", "run", "e", "write", "--stdin", input='{"note": "a"}\n{"count": "x"}\n')
    assert bad_line.code == 1
    assert cli(repo, "data", "versions", "e", "out").code == 1  # nothing ran: every line is checked first


def test_workflow_run_stdin_ndjson_runs_once_a_line(repo):
    (repo / "workflows" / "workflow-w.yaml").write_text(
        "name: w\ninputs:\n  properties:\n    note: {type: string}\njobs:\n  - name: j\n    steps:\n"
        "      - {name: s, task: {type: model_method, modelIdOrName: e, methodName: write, "
        "inputs: {note: '${{ inputs.note }}'}}}\n")
    r = cli(repo, "workflow", "run", "w", "--stdin", input='{"note": "a"}\n{"note": "b"}\n')
    assert r.code == 0, r
    assert [run["status"] for run in r.data] == ["succeeded", "succeeded"]
    assert [_out(repo, v)["note"] for v in (1, 2)] == ["a", "b"]


def test_output_records_are_found_by_a_unique_id_prefix(repo):
    ids = [cli(repo, "model", "method", "run", "e", "write").data["id"] for _ in range(3)]
    for full in ids:
        # the shortest prefix that is unique among these runs
        n = next(n for n in range(4, 37) if sum(i.startswith(full[:n]) for i in ids) == 1)
        got = cli(repo, "model", "output", "get", full[:n])
        assert got.code == 0 and got.data["id"] == full
        assert cli(repo, "model", "output", "logs", full[:n]).data["id"] == full
    short = cli(repo, "model", "output", "get", ids[0][:3])
    assert short.code == 1 and "first 4 characters" in short.error["hint"]


def test_model_delete_is_refused_while_a_workflow_uses_it(repo):
    (repo / "workflows" / "workflow-uses.yaml").write_text(
        "name: uses\njobs:\n  - name: j\n    steps:\n"
        "      - {name: s, task: {type: model_method, modelIdOrName: e, methodName: write}}\n")
    r = cli(repo, "model", "delete", "e", "-y")
    assert r.code == 1 and r.error["code"] == "conflict" and "uses" in r.error["error"]
    assert cli(repo, "model", "get", "e").code == 0
    (repo / "workflows" / "workflow-uses.yaml").unlink()
    assert cli(repo, "model", "delete", "e", "-y").code == 0


FAN = """\
name: fan
inputs:
  properties:
    items: {type: array, minItems: 1, items: {type: integer, minimum: 0}}
    env: {type: string, pattern: "^(dev|prod)$"}
jobs:
  - name: j
    steps:
      - name: "s-${{ self.i }}"
        forEach: {item: i, in: "${{ inputs.items }}"}
        task: {type: model_method, modelIdOrName: e, methodName: write}
"""


@pytest.mark.parametrize("args,problem", [
    (["--input", "items:json=[]"], "items: needs at least 1 item(s), got 0"),
    (["--input", "items:json=[1, -2]"], "items[1]: must be at least 0"),
    (["--input", "items:json=[1]", "--input", "env=qa"], "env: must match"),
])
def test_workflow_inputs_breaking_their_schema_are_refused_before_anything_runs(repo, args, problem):
    (repo / "workflows" / "workflow-fan.yaml").write_text(FAN)
    r = cli(repo, "workflow", "run", "fan", *args)
    assert r.code == 1 and problem in r.error["error"], r
    assert cli(repo, "workflow", "history", "fan").data == []  # no run was recorded


def test_an_empty_fan_out_succeeds(repo):
    (repo / "workflows" / "workflow-fan.yaml").write_text(FAN.replace("minItems: 1", "minItems: 0"))
    r = cli(repo, "workflow", "run", "fan", "--input", "items:json=[]")
    assert r.code == 0 and r.data["status"] == "succeeded"


def test_versions_written_by_a_workflow_step_carry_their_provenance_in_tags(repo):
    (repo / "workflows" / "workflow-w.yaml").write_text(
        "name: w\njobs:\n  - name: j\n    steps:\n"
        "      - {name: s, task: {type: model_method, modelIdOrName: e, methodName: write}}\n")
    run = cli(repo, "workflow", "run", "w").data
    tags = cli(repo, "data", "get", "e", "out").data["tags"]
    assert {"workflow": "w", "workflowRunId": run["id"], "step": "s"}.items() <= tags.items()
    assert cli(repo, "model", "method", "run", "e", "write").code == 0
    direct = cli(repo, "data", "get", "e", "out").data["tags"]
    assert not {"workflow", "workflowRunId", "step"} & set(direct)
    found = cli(repo, "data", "search", run["id"], "--all-versions").data
    assert [(f["name"], f["version"]) for f in found] == [("out", 1)]


def test_data_search_by_tag_and_query_by_upstreams_fields(repo):
    assert cli(repo, "model", "method", "run", "e", "write", "--tag", "env=prod").code == 0
    assert cli(repo, "model", "method", "run", "e", "write", "--tag", "env=dev").code == 0
    prod = cli(repo, "data", "search", "--tag", "env=prod", "--model", "e", "--all-versions").data
    assert [(r["name"], r["version"]) for r in prod] == [("out", 1)]
    q = cli(repo, "data", "query", 'modelName == "e" && tags.env == "dev" && size > 0').data
    assert [(r["name"], r["version"]) for r in q] == [("out", 2)]
    bad = cli(repo, "data", "query", "colour == 1")
    assert bad.code == 1 and "known fields:" in bad.error["hint"] and "modelName" in bad.error["hint"]


def test_workflow_validate_warns_of_a_missing_model_and_refuses_undeclared_inputs(repo):
    (repo / "workflows" / "workflow-later.yaml").write_text(
        "name: later\njobs:\n  - name: j\n    steps:\n"
        "      - {name: first, task: {type: model_method, modelIdOrName: notyet, methodName: write}}\n"
        "      - name: second\n        dependsOn: [{step: first}]\n"
        "        task: {type: model_method, modelIdOrName: e, methodName: write}\n")
    v = cli(repo, "workflow", "validate", "later")
    assert v.code == 0 and v.data["valid"] is True
    assert "no model named 'notyet'" in v.data["workflows"][0]["warnings"][0]
    r = cli(repo, "workflow", "run", "later")
    assert r.code == 1
    steps = {s["name"]: s for j in r.data["jobs"] for s in j["steps"]}
    assert steps["first"]["status"] == "failed" and "notyet" in steps["first"]["error"]
    assert steps["second"]["status"] == "skipped"

    (repo / "workflows" / "workflow-undecl.yaml").write_text(
        "name: undecl\ninputs:\n  properties:\n    env: {type: string}\njobs:\n  - name: j\n    steps:\n"
        "      - {name: s, task: {type: model_method, modelIdOrName: e, methodName: write,"
        " inputs: {note: 'inputs.literal ${{ inputs.evn }}'}}}\n")
    u = cli(repo, "workflow", "validate", "undecl")
    assert u.code == 1 and u.data["valid"] is False
    assert u.data["workflows"][0]["errors"] == [
        "jobs[0].steps[0].task.inputs: input 'evn' is not declared (did you mean 'env'?)"]
    assert set(cli(repo, "model", "validate").data["models"][0]) == {"name", "path", "valid", "errors", "problems", "warnings"}
