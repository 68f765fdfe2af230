"""Expressions as upstream's workflows write them (issue 14 items 14-17):
another definition's arguments and latest data through ``model.NAME`` (a
hyphenated name without brackets too), ``data.listVersions`` as numbers,
missing data as null, null-safe chaining, and ``model.method(...)`` running
a probe in an assert."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo

WORKFLOW = """\
name: exprs
jobs:
  - name: main
    steps:
      - name: versions
        task:
          type: assert
          expr: "${{ data.listVersions('sh-one', 'result') == [1, 2] }}"
          message: "versions are ${{ data.listVersions('sh-one', 'result') }}"
      - name: nulls
        task:
          type: assert
          expr: "${{ data.latest('sh-one', 'missing') == null && data.version('sh-one', 'result', 9) == null }}"
          message: "missing data is not null"
      - name: null-safe
        task:
          type: assert
          expr: >-
            ${{ data.latest('sh-one', 'missing').?attributes.?stdout.orValue('fallback') == 'fallback'
            && data.latest('sh-one', 'result').?attributes.?stdout.orValue('fallback') == 'hello' }}
          message: "null-safe chaining"
      - name: models
        task:
          type: assert
          expr: >-
            ${{ model.sh-one.input.globalArguments.run == 'echo hello'
            && model['sh-one'].input.globalArguments.run == 'echo hello'
            && model.sh-one.resource.result.result.attributes.exitCode == 0 }}
          message: "model namespace"
      - name: probe
        dependsOn:
          - {step: versions, condition: {type: completed}}
          - {step: nulls, condition: {type: completed}}
          - {step: null-safe, condition: {type: completed}}
          - {step: models, condition: {type: completed}}
        task:
          type: assert
          expr: "${{ model.method('sh-one', 'execute').exitCode == 0 }}"
          message: "probe"
      - name: failing-probe
        allowFailure: true
        task:
          type: assert
          expr: "${{ model.method('sh-fail', 'execute').?exitCode.orValue(1) == 0 }}"
          message: "the probe failed"
"""


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    assert cli(r, "model", "create", "command/shell", "sh-one", "--global-arg", "run=echo hello").code == 0
    assert cli(r, "model", "create", "command/shell", "sh-fail", "--global-arg", "run=exit 3").code == 0
    for _ in range(2):
        assert cli(r, "model", "method", "run", "sh-one", "execute").code == 0
    (r / "workflows").mkdir(exist_ok=True)
    (r / "workflows" / "workflow-exprs.yaml").write_text(WORKFLOW)
    return r


def test_upstream_expressions_in_a_workflow(repo):
    assert cli(repo, "workflow", "validate", "exprs").code == 0
    r = cli(repo, "workflow", "run", "exprs")
    steps = {s["name"]: s for s in r.data["jobs"][0]["steps"]}
    assert r.code == 0, r
    assert all(steps[n]["status"] == "succeeded" for n in ("versions", "nulls", "null-safe", "models", "probe"))
    assert steps["failing-probe"]["status"] == "failed" and "the probe failed" in steps["failing-probe"]["error"]
    # the probe ran the method: a third version, written by the workflow run
    assert cli(repo, "data", "versions", "sh-one", "result").data[-1]["version"] == 3


def test_a_definition_reads_another_definition(repo):
    d = repo / "models" / "command" / "shell"
    (d / "reader.yaml").write_text(
        "type: command/shell\nname: reader\nglobalArguments:\n"
        "  run: \"echo ${{ model.sh-one.resource.result.result.attributes.stdout }}"
        "-${{ model['sh-one'].input.globalArguments.run }}\"\n")
    r = cli(repo, "model", "method", "run", "reader", "execute")
    assert r.code == 0, r
    assert cli(repo, "data", "get", "reader", "result").data["content"]["stdout"] == "hello-echo hello"
