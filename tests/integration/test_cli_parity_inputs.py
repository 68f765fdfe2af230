"""Method arguments and definition inputs as upstream's users rely on them
(issue 14 items 1-2): a type whose method has required arguments can be
created; a run gives them with --input (which also overrides what the
definition says); model validate never calls an argument a run can give
missing; a required definition input is demanded only when the method's
arguments read it."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, snapshot, write_type

NEED = '''
from pydantic import BaseModel
from swamp import Context, ModelType

class G(BaseModel):
    region: str = "eu"

class A(BaseModel):
    size: int

class Out(BaseModel):
    region: str
    size: int

need = ModelType("acme/need", version="2026.11.30.1", global_arguments=G)
need.resource("out", schema=Out)

@need.method(description="Write", arguments=A)
def write(args, ctx: Context) -> None:
    ctx.write_resource("out", "out", Out(region=args.region, size=args.size))

@need.method(description="Write again", arguments=A)
def again(args, ctx: Context) -> None:
    ctx.write_resource("out", "out", Out(region=args.region, size=args.size))
'''


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    write_type(r, "need.py", NEED)
    return r


def test_required_method_arguments_come_from_input(repo):
    assert cli(repo, "model", "create", "acme/need", "n").code == 0
    v = cli(repo, "model", "validate", "n").data
    assert v["valid"] and v["models"][0]["errors"] == []
    before = snapshot(repo)
    missing = cli(repo, "model", "method", "run", "n", "write")
    assert missing.code == 1 and missing.error["error"].count("size") == 1
    assert "--input size=" in missing.error["hint"]
    wrong = cli(repo, "model", "method", "run", "n", "write", "--input", "size=big")
    assert wrong.code == 1 and "size" in wrong.error["error"]
    assert snapshot(repo) == before  # refused before anything was written
    assert cli(repo, "model", "method", "run", "n", "write", "--input", "size=3",
               "--input", "region=us").code == 0
    assert cli(repo, "data", "get", "n", "out").data["content"] == {"region": "us", "size": 3}


def test_validate_reports_a_bad_global_value_once(repo):
    (repo / "models" / "acme" / "need").mkdir(parents=True)
    (repo / "models" / "acme" / "need" / "b.yaml").write_text(
        "type: acme/need\nname: b\nglobalArguments:\n  region: 5\n")
    r = cli(repo, "model", "validate", "b")
    assert r.code == 1
    errors = r.data["models"][0]["errors"]
    assert len(errors) == 1 and "region" in errors[0]  # not once per method


def test_required_inputs_are_demanded_only_when_referenced(repo):
    (repo / "models" / "acme" / "need").mkdir(parents=True)
    (repo / "models" / "acme" / "need" / "m.yaml").write_text(
        "type: acme/need\nname: m\n"
        "inputs:\n  properties:\n    sz: {type: integer}\n    unused: {type: string}\n"
        "  required: [sz, unused]\n"
        "methods:\n  write:\n    arguments:\n      size: ${{ inputs.sz }}\n")
    r = cli(repo, "model", "method", "run", "m", "write")
    assert r.code == 1 and "sz" in r.error["error"] and "unused" not in r.error["error"]
    assert cli(repo, "model", "method", "run", "m", "write", "--input", "sz=4").code == 0
    assert cli(repo, "data", "get", "m", "out").data["content"]["size"] == 4
    # an --input naming an argument overrides the definition's expression
    assert cli(repo, "model", "method", "run", "m", "write", "--input", "sz=1", "--input", "size=9").code == 0
    assert cli(repo, "data", "get", "m", "out").data["content"]["size"] == 9
    unknown = cli(repo, "model", "method", "run", "m", "write", "--input", "siz=1")
    assert unknown.code == 1 and "siz" in unknown.error["error"]


def test_workflow_validate_routes_step_inputs_as_a_run_does(repo):
    (repo / "models" / "acme" / "need").mkdir(parents=True)
    (repo / "models" / "acme" / "need" / "m.yaml").write_text(
        "type: acme/need\nname: m\n"
        "inputs:\n  properties:\n    sz: {type: integer}\n    unused: {type: string}\n"
        "  required: [sz, unused]\n"
        "methods:\n  write:\n    arguments:\n      size: ${{ inputs.sz }}\n")
    (repo / "workflows").mkdir(exist_ok=True)
    step = "      - name: s\n        task: {type: model_method, modelIdOrName: m, methodName: write, inputs: %s}\n"
    doc = "name: w\njobs:\n  - name: j\n    steps:\n"
    (repo / "workflows" / "workflow-w.yaml").write_text(doc + step % "{sz: 2, region: us}")
    assert cli(repo, "workflow", "validate", "w").code == 0  # 'unused' is never read; region is an argument
    (repo / "workflows" / "workflow-w.yaml").write_text(doc + step % "{region: us}")
    r = cli(repo, "workflow", "validate", "w")
    assert r.code == 1 and "'sz'" in r.stdout and "unused" not in r.stdout


def test_evaluate_names_what_a_run_must_give(repo):
    assert cli(repo, "model", "create", "acme/need", "n").code == 0
    r = cli(repo, "model", "evaluate", "n").data
    assert r["methods"] == {} and r["missingArguments"] == {"again": ["size"], "write": ["size"]}
    one = cli(repo, "model", "evaluate", "n", "--method", "write", "--input", "size=2").data
    assert one["methods"]["write"] == {"region": "eu", "size": 2}
