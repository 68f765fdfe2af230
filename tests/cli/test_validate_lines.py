"""`workflow validate` and `model validate` list every error of a file on a
line of its own, each naming its place in the file, sorted by place (steps[2]
before steps[10]); --json gives the same lines (``errors``) and the same as
``{"path", "message"}`` pairs (``problems``). A command refused for a file's
schema errors (`workflow run`) gives them one a line too, and in its --json
error document as ``errors``."""

from __future__ import annotations

from tests.helpers import init_repo, invoke, write_shell, write_workflow

BAD = """
    jobs:
      - name: j
        steps:
          - name: a
            task: {type: model_method, modelIdOrName: x}
          - name: b
            retries: -1
            task: {type: model_method, modelIdOrName: x, methodName: y, bogus: 1}
          - name: c
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: d
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: e
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: f
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: g
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: h
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: i
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: k
            task: {type: model_method, modelIdOrName: x, methodName: y}
          - name: l
            timeout: soon
            task: {type: model_method, methodName: y}
    """

#: in the file's order: steps[10] after steps[1], not between steps[1] and steps[2]
EXPECTED = [
    ("jobs[0].steps[0].task", "a model_method task needs methodName"),
    ("jobs[0].steps[1].retries", "must be from 0 to 100, not -1"),
    ("jobs[0].steps[1].task.bogus", "unknown key"),
    ("jobs[0].steps[10].task", "a model_method task needs modelIdOrName (or modelType and modelName)"),
    ("jobs[0].steps[10].timeout", "must be a number of seconds (like 30 or 0.5), not 'soon'"),
]


def _repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_workflow(repo, "bad", BAD)
    return repo


def test_workflow_validate_prints_each_error_on_its_own_line_sorted_by_place(tmp_path):
    repo = _repo(tmp_path)
    r = invoke(repo, "workflow", "validate", "bad", json=False)
    assert r.code == 1
    lines = [line.strip() for line in r.stdout.splitlines()]
    assert lines[0].startswith("INVALID") and lines[0].endswith("bad")
    assert lines[1:] == [f"{path}: {message}" for path, message in EXPECTED]


def test_workflow_validate_json_gives_the_lines_and_path_message_pairs(tmp_path):
    repo = _repo(tmp_path)
    r = invoke(repo, "workflow", "validate", "bad")
    assert r.code == 1 and r.data["valid"] is False
    (entry,) = r.data["workflows"]
    assert entry["valid"] is False and entry["path"] == "workflows/workflow-bad.yaml"
    assert entry["errors"] == [f"{path}: {message}" for path, message in EXPECTED]
    assert entry["problems"] == [{"path": path, "message": message} for path, message in EXPECTED]


def test_a_workflows_checks_after_its_schema_are_sorted_by_place_too(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "hello", "type: command/shell\nname: hello\nglobalArguments:\n  run: echo hi\n")
    write_workflow(repo, "dag", """
        jobs:
          - name: j
            steps:
              - name: b
                dependsOn: [{step: nope}]
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
              - name: a
                dependsOn: [{step: a}]
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
          - name: j
            steps:
              - name: c
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
        """)
    r = invoke(repo, "workflow", "validate", "dag")
    assert r.code == 1
    (entry,) = r.data["workflows"]
    paths = [p["path"] for p in entry["problems"]]
    assert len(paths) >= 3, entry
    assert all(paths), entry  # each names its place
    assert [e.split(": ", 1)[0] for e in entry["errors"]] == paths
    assert paths == sorted(paths, key=lambda p: [int(x) if x.isdigit() else x
                                                  for x in p.replace("[", ".").replace("]", "").split(".")])


def test_a_refused_run_names_each_schema_error_on_its_own_line_and_in_its_json_error(tmp_path):
    repo = _repo(tmp_path)
    human = invoke(repo, "workflow", "run", "bad", json=False)
    assert human.code == 1 and "Traceback" not in human.stderr
    lines = human.stderr.splitlines()
    assert lines[0] == f"error: workflows/workflow-bad.yaml: {len(EXPECTED)} problems"
    assert [line.strip() for line in lines[1:1 + len(EXPECTED)]] == [f"{p}: {m}" for p, m in EXPECTED]
    r = invoke(repo, "workflow", "run", "bad")
    assert r.code == 1
    assert r.error["code"] == "validation" and r.error["error"].startswith("workflows/workflow-bad.yaml: ")
    assert r.error["errors"] == [{"path": path, "message": message} for path, message in EXPECTED]


def test_model_validate_lists_each_schema_error_on_its_own_line_with_its_did_you_mean(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "m", """
        type: command/shell
        name: m
        globalArgumentz: {run: echo hi}
        methods: 3
        """)
    human = invoke(repo, "model", "validate", "m", json=False)
    assert human.code == 1
    lines = [line.strip() for line in human.stdout.splitlines()]
    assert lines[1:] == ["globalArgumentz: unknown key (did you mean 'globalArguments'?)",
                         "methods: Input should be a valid dictionary"]
    r = invoke(repo, "model", "validate", "m")
    (entry,) = r.data["models"]
    assert [p["path"] for p in entry["problems"]] == ["globalArgumentz", "methods"]


def test_model_validate_sorts_its_definition_checks_by_place(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "m", """
        type: command/shell
        name: m
        globalArguments:
          run: 3
          nope: x
        methods:
          nomethod: {}
        """)
    r = invoke(repo, "model", "validate", "m")
    assert r.code == 1
    (entry,) = r.data["models"]
    paths = [p["path"] for p in entry["problems"]]
    assert paths == sorted(paths) and "methods.nomethod" in paths and "globalArguments.nope" in paths, entry
