"""`swamp workflow ...` through the command line: the issue's example exactly
as written, secrets kept out of every file, the commands' JSON contract,
JUnit reports, approvals, and runs in several processes at once."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo, invoke, popen
from tests.helpers import make_repo, write_shell, write_workflow

SECRET = "tok-9f3a7c1e-Very-Secret"

GREETER = """
type: command/shell
name: greeter
inputs:
  properties:
    message: {type: string}
  required: [message]
globalArguments:
  run: "echo ${{ inputs.message }}"
"""

SECRETIVE = """
type: command/shell
name: secretive
globalArguments:
  run: 'test -n "$TOKEN" && echo matched'
  env:
    TOKEN: "${{ vault.get('main', 'token') }}"
"""

FANOUT = """
name: fanout
inputs:
  properties:
    greeting: {type: string}
  required: [greeting]
jobs:
  - name: greet
    steps:
      - name: "say-${{ self.item }}"
        forEach:
          item: item
          in: "${{ ['a', 'b', 'c'] }}"
        task:
          type: model_method
          modelIdOrName: greeter
          methodName: execute
          inputs:
            message: "${{ inputs.greeting }}-${{ self.item }}"
  - name: secret
    dependsOn:
      - job: greet
        condition: {type: succeeded}
    steps:
      - name: use-secret
        task:
          type: model_method
          modelIdOrName: secretive
          methodName: execute
"""


@pytest.fixture
def example(tmp_path) -> Path:
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "greeter", GREETER)
    write_shell(repo, "secretive", SECRETIVE)
    (repo / "workflows" / "workflow-fanout.yaml").write_text(FANOUT.lstrip())
    assert cli(repo, "vault", "create", "local_encryption", "main").code == 0
    assert cli(repo, "vault", "put", "main", "token", input=SECRET).code == 0
    return repo


def files_containing(root: Path, needle: str) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and needle.encode() in p.read_bytes():
            hits.append(str(p.relative_to(root)))
    return hits


def test_the_issue_example_works_exactly_as_written(example):
    r = cli(example, "workflow", "run", "fanout", "--input", "greeting=hello")
    assert r.code == 0, r
    rec = r.data
    assert rec["workflowName"] == "fanout" and rec["status"] == "succeeded" and rec["id"]
    names = [s["name"] for j in rec["jobs"] for s in j["steps"]]
    assert names == ["say-a", "say-b", "say-c", "use-secret"]
    assert all(s["status"] == "succeeded" for j in rec["jobs"] for s in j["steps"])
    versions = cli(example, "data", "versions", "greeter", "result").data
    assert [v["version"] for v in versions] == [1, 2, 3]
    stdouts = [cli(example, "data", "get", "greeter", "result", "--version", v).data["content"]["stdout"]
               for v in (1, 2, 3)]
    assert stdouts == ["hello-a", "hello-b", "hello-c"]
    assert cli(example, "data", "get", "secretive", "result").data["content"]["stdout"] == "matched"
    assert files_containing(example, SECRET) == []
    # The value is in the repository only inside the encrypted vault.
    assert any("secrets" in p for p in (str(x) for x in (example / ".swamp").rglob("*") if x.is_file()))


def test_the_example_without_its_input_is_refused_naming_it(example):
    r = cli(example, "workflow", "run", "fanout")
    assert r.code == 1 and r.stdout == ""
    assert "greeting" in r.error["error"]
    assert not (example / ".swamp" / "workflow-runs").exists()
    assert cli(example, "data", "list").data == []


def test_a_failing_step_that_prints_the_secret_leaks_it_nowhere(example):
    write_shell(example, "leaky", """
        type: command/shell
        name: leaky
        globalArguments:
          run: 'echo "the token is $TOKEN"; echo "$TOKEN" >&2; exit 3'
          env:
            TOKEN: "${{ vault.get('main', 'token') }}"
        """)
    write_workflow(example, "leak", """
        jobs:
          - name: j
            steps:
              - {name: leak, task: {type: model_method, modelIdOrName: leaky, methodName: execute}}
              - name: say
                dependsOn: [{step: leak, condition: {type: failed}}]
                task: {type: model_method, modelIdOrName: greeter, methodName: execute,
                       inputs: {message: "${{ vault.get('main', 'token') }}"}}
        """)
    junit = example / "report.xml"
    r = cli(example, "workflow", "run", "leak", "--junit", junit)
    assert r.code == 1, r
    assert r.data["status"] == "failed" and SECRET not in r.stdout + r.stderr
    logs = cli(example, "workflow", "logs", "leak")
    assert logs.code == 0 and SECRET not in logs.stdout
    assert files_containing(example, SECRET) == []
    assert cli(example, "data", "get", "leaky", "log").data["content"].startswith("the token is ***\n")
    assert cli(example, "data", "get", "leaky", "result").code == 1  # a failed command writes no result


def test_runs_in_several_processes_share_a_model_without_losing_versions(tmp_path):
    repo = make_repo(tmp_path / "repo", models=1)
    write_workflow(repo, "many", """
        jobs:
          - name: j
            steps:
              - name: each
                forEach: {item: i, in: "${{ [1, 2, 3, 4, 5] }}"}
                task: {type: model_method, modelIdOrName: w0, methodName: work, inputs: {value: "x"}}
        """)
    procs = [popen(repo, "workflow", "run", "many") for _ in range(3)]
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    versions = cli(repo, "data", "versions", "w0", "span").data
    assert [v["version"] for v in versions] == list(range(1, 16))


# --------------------------------------------------------------- commands
@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


def test_create_get_search(repo):
    r = invoke(repo, "workflow", "create", "deploy")
    assert r.code == 0 and r.data["name"] == "deploy" and r.data["path"] == "workflows/workflow-deploy.yaml"
    assert invoke(repo, "workflow", "create", "deploy").code == 1
    assert invoke(repo, "workflow", "create", "../x").code == 1
    got = invoke(repo, "workflow", "get", "deploy").data
    assert got["name"] == "deploy" and got["id"] == r.data["id"] and got["jobs"][0]["name"] == "main"
    assert invoke(repo, "workflow", "get", r.data["id"]).data["name"] == "deploy"
    missing = invoke(repo, "workflow", "get", "deplo")
    assert missing.code == 1 and missing.error["hint"] == "did you mean 'deploy'?"
    invoke(repo, "workflow", "create", "build")
    assert [w["name"] for w in invoke(repo, "workflow", "search").data] == ["build", "deploy"]
    assert [w["name"] for w in invoke(repo, "workflow", "search", "dep").data] == ["deploy"]
    # The skeleton is valid and runs.
    assert invoke(repo, "workflow", "validate", "deploy").data["valid"] is True
    assert invoke(repo, "workflow", "run", "deploy").data["status"] == "succeeded"


def test_validate_reports_every_problem_and_exits_1(repo):
    write_workflow(repo, "broken", """
        jobs:
          - name: j
            steps:
              - {name: a, task: {type: model_method, modelIdOrName: w00, methodName: work}}
              - {name: b, task: {type: model_method, modelIdOrName: w0, methodName: wrok}}
              - {name: c, task: {type: model_method, modelIdOrName: w0, methodName: work, inputs: {valeu: x}}}
              - {name: d, guard: "${{ self.x }}", task: {type: assert, expr: "true", message: m}}
              - {name: e, task: {type: assert, expr: "1 +", message: m}}
              - {name: f, dependsOn: [{step: g}], task: {type: workflow, workflowIdOrName: nope}}
        """)
    write_workflow(repo, "fine", "jobs:\n  - name: j\n    steps:\n"
                   "      - {name: s, task: {type: model_method, modelIdOrName: w0, methodName: work}}\n")
    r = invoke(repo, "workflow", "validate")
    assert r.code == 1
    report = {w["name"]: w for w in r.data["workflows"]}
    assert report["fine"]["valid"] is True and r.data["valid"] is False
    errors = "\n".join(report["broken"]["errors"])
    # A model that does not exist (yet) is a warning: the run fails only that step.
    assert report["broken"]["warnings"] == [
        "jobs[0].steps[0].task.modelIdOrName: no model named 'w00'; a run fails this step until it exists "
        "(did you mean 'w0'?)"]
    assert "jobs[0].steps[1].task.methodName: model type 'test/work' has no method 'wrok' (did you mean 'work'?)" in errors
    assert "jobs[0].steps[2].task.inputs.valeu: model 'w0' takes no input 'valeu' (did you mean 'value'?)" in errors
    assert "jobs[0].steps[3].guard: 'self' is only set in a forEach step" in errors
    assert "jobs[0].steps[4].task.expr" in errors
    assert "jobs[0].steps[5].dependsOn[0]: no step of job 'j' named 'g'" in errors
    assert "jobs[0].steps[5].task: no workflow named 'nope'" in errors
    # A run refuses the same workflow before writing anything.
    run = invoke(repo, "workflow", "run", "broken")
    assert run.code == 1 and "is not valid" in run.error["error"]
    assert not (repo / ".swamp" / "workflow-runs").exists()
    human = invoke(repo, "workflow", "validate", json=False)
    assert human.code == 1 and "INVALID broken" in human.stdout and "ok      fine" in human.stdout


def test_a_malformed_file_names_the_file(repo):
    (repo / "workflows" / "workflow-bad.yaml").write_text("name: bad\njobs: [\n")
    r = invoke(repo, "workflow", "validate", "bad")
    assert r.code == 1 and "workflow-bad.yaml:" in r.data["workflows"][0]["errors"][0]
    r = invoke(repo, "workflow", "run", "bad")
    assert r.code == 1 and "malformed YAML" in r.error["error"] and "workflow-bad.yaml" in r.error["error"]


def test_evaluate_shows_expansions_and_what_is_left(repo):
    write_workflow(repo, "ev", """
        inputs:
          properties:
            envs: {type: array}
            name: {type: string}
          required: [envs]
        jobs:
          - name: j
            steps:
              - name: "deploy-${{ self.e }}"
                forEach: {item: e, in: "${{ inputs.envs }}"}
                task:
                  type: model_method
                  modelIdOrName: w0
                  methodName: work
                  inputs: {value: "${{ self.e }}-${{ data.latest('w0', 'span').content.value }}"}
              - name: plain
                task: {type: model_method, modelIdOrName: w1, methodName: work, inputs: {value: "${{ inputs.name }}"}}
        """)
    r = invoke(repo, "workflow", "evaluate", "ev", "--input", '{"envs": ["dev", "prod"]}', "--input", "name=n")
    assert r.code == 0, r
    steps = r.data["jobs"][0]["steps"]
    assert [s["name"] for s in steps] == ["deploy-dev", "deploy-prod", "plain"]
    assert steps[2]["task"]["inputs"] == {"value": "n"}
    # No data yet: the expansions' inputs stay as written and are listed.
    assert steps[0]["task"]["inputs"]["value"].startswith("${{")
    assert [u["field"] for u in r.data["unresolved"]] == ["jobs[0].steps[0].task.inputs.value"] * 2
    missing = invoke(repo, "workflow", "evaluate", "ev")
    assert missing.code == 0 and missing.data["unresolved"][0]["field"] == "inputs"


def test_run_json_history_logs_and_junit(repo, tmp_path):
    write_workflow(repo, "ci", """
        jobs:
          - name: test
            steps:
              - {name: unit, task: {type: model_method, modelIdOrName: w0, methodName: work}}
              - {name: lint, task: {type: assert, expr: "1 == 2", message: "style", severity: low}}
              - {name: skipme, guard: true, task: {type: assert, expr: "true", message: m}}
        """)
    junit = tmp_path / "junit.xml"
    r = invoke(repo, "workflow", "run", "ci", "--junit", str(junit))
    assert r.code == 1 and r.data["status"] == "failed"
    assert {"id", "workflowName", "status", "jobs"} <= set(r.data) and "pid" not in r.data
    steps = {s["name"]: s for s in r.data["jobs"][0]["steps"]}
    assert steps["skipme"]["skipReason"] == "guarded"
    assert steps["lint"]["assertResult"] == {"passed": False, "severity": "low", "message": "style",
                                             "failsRun": True}
    suite = ET.parse(junit).getroot().find("testsuite")
    assert [tc.get("name") for tc in suite.findall("testcase")] == ["lint", "skipme", "unit"]  # one level: by name
    assert suite.get("failures") == "1" and suite.get("skipped") == "1"

    r2 = invoke(repo, "workflow", "run", "ci", "--fail-on", "medium")
    assert r2.code == 0 and r2.data["status"] == "succeeded"
    assert invoke(repo, "workflow", "run", "ci", "--fail-on", "urgent").code == 2

    hist = invoke(repo, "workflow", "history", "ci").data
    assert [h["id"] for h in hist] == [r2.data["id"], r.data["id"]]
    assert hist[1]["status"] == "failed" and hist[1]["failedSteps"] == 1
    logs = invoke(repo, "workflow", "logs", "ci", "--run", r.data["id"]).data
    assert logs["id"] == r.data["id"] and "step test/lint: failed" in logs["log"]
    assert invoke(repo, "workflow", "logs", "ci").data["id"] == r2.data["id"]
    human = invoke(repo, "workflow", "run", "ci", json=False)
    assert human.code == 1 and "workflow ci: run" in human.stdout and "lint" in human.stdout


def test_approve_reject_resume_and_cancel_through_the_cli(repo):
    write_workflow(repo, "gate", """
        jobs:
          - name: j
            steps:
              - {name: ask, task: {type: manual_approval, prompt: "go on?"}}
              - {name: go, dependsOn: [{step: ask}], task: {type: model_method, modelIdOrName: w0, methodName: work}}
        """)
    r = invoke(repo, "workflow", "run", "gate")
    assert r.code == 0 and r.data["status"] == "suspended"
    assert r.data["approvalRequired"] == [{"job": "j", "step": "ask", "prompt": "go on?"}]
    resumed = invoke(repo, "workflow", "resume", "gate")
    assert resumed.code == 0 and resumed.data["status"] == "suspended"
    a = invoke(repo, "workflow", "approve", "gate", "ask", "--reason", "fine")  # the run continues here
    assert a.code == 0 and a.data["decision"] == "approved" and a.data["reason"] == "fine"
    assert a.data["resumed"] is True and a.data["run"]["status"] == "succeeded"
    assert invoke(repo, "workflow", "resume", "gate").code == 1  # nothing suspended any more

    r = invoke(repo, "workflow", "run", "gate")
    rejected = invoke(repo, "workflow", "reject", "gate", "ask", "--run", r.data["id"])
    assert rejected.code == 0 and rejected.data["run"]["status"] == "failed"

    r = invoke(repo, "workflow", "run", "gate")
    c = invoke(repo, "workflow", "cancel", "gate")
    assert c.code == 0 and c.data == {"id": r.data["id"], "workflowName": "gate", "status": "cancelled",
                                      "cancelRequested": False}
    assert [h["status"] for h in invoke(repo, "workflow", "history", "gate").data] == [
        "cancelled", "failed", "succeeded"]
