"""Data specs overridden by a definition and by a workflow step (issue 14
items 9-10): lifetime and garbageCollection per spec name, data gc
--dry-run reporting what would go, ephemeral data seen by later steps of
the run and never written, a workflow lifetime collected once its runs are
deleted, and vary giving one version chain per input value."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, snapshot, write_type

TYPE = '''
from pydantic import BaseModel
from swamp import Context, ModelType

class A(BaseModel):
    value: str = "v"

w = ModelType("acme/w", version="2026.11.30.1")
w.resource("result")
w.resource("scratch", lifetime="ephemeral")
w.file("notes", lifetime="ephemeral")

@w.method(description="Write the result", arguments=A)
def write(args, ctx: Context) -> None:
    ctx.write_resource("result", "result", {"value": args.value})

@w.method(description="Write scratch data", arguments=A)
def scratch(args, ctx: Context) -> None:
    ctx.write_resource("scratch", "scratch", {"value": args.value})
    with ctx.file_writer("notes", "notes") as f:
        f.write_line(f"note {args.value}")
'''

WORKFLOW = """\
name: life
inputs:
  properties:
    env: {type: string}
jobs:
  - name: main
    steps:
      - name: scratch
        task: {type: model_method, modelIdOrName: k, methodName: scratch, inputs: {value: "s-${{ inputs.env }}"}}
      - name: use
        dependsOn: [{step: scratch}]
        dataOutputOverrides:
          - {specName: result, lifetime: workflow, vary: [env], tags: {stage: build}}
        task:
          type: model_method
          modelIdOrName: k
          methodName: write
          inputs: {value: "${{ data.latest('k', 'scratch').attributes.value }}"}
      - name: check
        dependsOn: [{step: use}]
        task:
          type: assert
          expr: >-
            ${{ data.latest('k', 'result', [inputs.env]).attributes.value == 's-' + inputs.env
            && data.latest('k', 'notes').content == 'note s-' + inputs.env + '\\n' }}
          message: "vary"
"""


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    write_type(r, "w.py", TYPE)
    (r / "models" / "acme" / "w").mkdir(parents=True)
    (r / "models" / "acme" / "w" / "k.yaml").write_text(
        "type: acme/w\nname: k\nresources:\n  result: {garbageCollection: 2}\n")
    return r


def test_definition_overrides_and_gc_dry_run(repo):
    for i in range(4):
        assert cli(repo, "model", "method", "run", "k", "write", "--input", f"value={i}").code == 0
    before = snapshot(repo)
    dry = cli(repo, "data", "gc", "--dry-run").data
    assert dry == {"dryRun": True, "deleted": [{"model": "k", "name": "result", "version": 1},
                                               {"model": "k", "name": "result", "version": 2}]}
    assert snapshot(repo) == before  # a dry run deletes nothing
    assert cli(repo, "data", "gc", "-y").data["dryRun"] is False
    assert [v["version"] for v in cli(repo, "data", "versions", "k", "result").data] == [3, 4]
    (repo / "models" / "acme" / "w" / "bad.yaml").write_text(
        "type: acme/w\nname: bad\nresources:\n  resul: {lifetime: forever}\n")
    bad = cli(repo, "model", "validate", "bad")
    assert bad.code == 1 and "did you mean 'result'" in bad.data["models"][0]["errors"][0]


def test_step_lifetimes_ephemeral_and_vary(repo):
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-life.yaml").write_text(WORKFLOW)
    for env in ("prod", "dev", "prod"):
        r = cli(repo, "workflow", "run", "life", "--input", f"env={env}")
        assert r.code == 0, r
    names = {row["name"]: row for row in cli(repo, "data", "list", "k").data}
    assert set(names) == {"result-dev", "result-prod"}  # ephemeral scratch never written
    assert names["result-prod"]["latestVersion"] == 2 and names["result-dev"]["latestVersion"] == 1
    prod = cli(repo, "data", "get", "k", "result-prod").data
    assert prod["lifetime"] == "workflow" and prod["tags"]["stage"] == "build"
    assert prod["content"] == {"value": "s-prod"}
    assert cli(repo, "data", "gc", "--dry-run").data["deleted"] == []  # its runs still exist
    assert cli(repo, "workflow", "delete", "life", "-y").code == 0
    gone = cli(repo, "data", "gc", "-y").data["deleted"]
    assert sorted((g["name"], g["version"]) for g in gone) == [("result-dev", 1), ("result-prod", 1),
                                                               ("result-prod", 2)]


def test_validate_checks_data_output_overrides(repo):
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-life.yaml").write_text(
        WORKFLOW.replace("specName: result,", "specName: resutl,").replace("vary: [env]", "vary: [stage]"))
    r = cli(repo, "workflow", "validate", "life")
    assert r.code == 1
    text = r.stdout
    assert "resutl" in text and "did you mean 'result'" in text and "'stage' is neither" in text
    (repo / "workflows" / "workflow-life.yaml").write_text(WORKFLOW.replace("lifetime: workflow", "lifetime: forever"))
    bad = cli(repo, "workflow", "validate", "life")
    assert bad.code == 1 and "forever" in bad.stdout + bad.stderr
