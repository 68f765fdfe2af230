"""A validate report's ``problems`` come from the checks as (place, message)
pairs, not from splitting its lines back apart: a key holding ": " or a
space, or a step named with ": ", is reported at its own place, with its
own message, and sorted among the others by that place. The lines
(``errors``) read as before: ``<place>: <message>``."""

from __future__ import annotations

from tests.helpers import init_repo, invoke, write_shell, write_workflow


def _entry(r, kind: str) -> dict:
    (entry,) = r.data[kind]
    assert entry["errors"] == [f"{p['path']}: {p['message']}" for p in entry["problems"]], entry
    return entry


def test_an_input_key_with_a_colon_or_a_space_is_its_own_place(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "hello", "type: command/shell\nname: hello\nglobalArguments:\n  run: echo hi\n")
    write_workflow(repo, "keys", """
        jobs:
          - name: j
            steps:
              - name: a
                task: {type: model_method, modelIdOrName: hello, methodName: exec}
              - name: b
                task:
                  type: model_method
                  modelIdOrName: hello
                  methodName: execute
                  inputs: {"a: b": 1, "my key": 2, runn: 3}
        """)
    r = invoke(repo, "workflow", "validate", "keys")
    assert r.code == 1
    entry = _entry(r, "workflows")
    assert entry["problems"] == [
        {"path": "jobs[0].steps[0].task.methodName",
         "message": "model type 'command/shell' has no method 'exec' (did you mean 'execute'?)"},
        {"path": "jobs[0].steps[1].task.inputs.a: b", "message": "model 'hello' takes no input 'a: b'"},
        {"path": "jobs[0].steps[1].task.inputs.my key", "message": "model 'hello' takes no input 'my key'"},
        {"path": "jobs[0].steps[1].task.inputs.runn",
         "message": "model 'hello' takes no input 'runn' (did you mean 'run'?)"},
    ]
    human = invoke(repo, "workflow", "validate", "keys", json=False)
    assert [line.strip() for line in human.stdout.splitlines()[1:]] == entry["errors"]


def test_a_schema_error_at_a_key_with_a_colon_or_a_space_is_its_own_place(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_workflow(repo, "schema", """
        jobs:
          - name: j
            steps:
              - name: a
                task: {type: model_method, modelIdOrName: x, methodName: y, "e: f": 1, "g h": 2}
        """)
    entry = _entry(invoke(repo, "workflow", "validate", "schema"), "workflows")
    assert entry["problems"] == [{"path": "jobs[0].steps[0].task.e: f", "message": "unknown key"},
                                 {"path": "jobs[0].steps[0].task.g h", "message": "unknown key"}]


def test_a_signal_default_of_a_step_named_with_a_colon_keeps_its_whole_message(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_workflow(repo, "wait", """
        jobs:
          - name: j
            steps:
              - name: "release: now"
                task:
                  type: wait_for_signal
                  prompt: which version?
                  timeout: 60
                  onTimeout: continue
                  default: {version: 3}
                  schema: {type: object, properties: {version: {type: string}}}
        """)
    entry = _entry(invoke(repo, "workflow", "validate", "wait"), "workflows")
    assert entry["problems"] == [{"path": "jobs[0].steps[0].task.default",
                                  "message": "version: expected string, got int"}]


def test_a_model_argument_or_method_with_a_colon_or_a_space_is_its_own_place(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "m", """
        type: command/shell
        name: m
        globalArguments:
          run: echo hi
          "a: b": 1
          "sp ace": 2
        methods:
          "x: y": {}
          execute: {arguments: {"k: v": 1}}
        """)
    r = invoke(repo, "model", "validate", "m")
    assert r.code == 1
    entry = _entry(r, "models")
    assert entry["problems"] == [
        {"path": "globalArguments.a: b", "message": "unknown key"},
        {"path": "globalArguments.sp ace", "message": "unknown key"},
        {"path": "methods.execute.arguments.k: v", "message": "unknown key"},
        {"path": "methods.x: y", "message": "command/shell has no method 'x: y'"},
    ]


def test_a_file_that_does_not_load_is_reported_whole(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_workflow(repo, "broken", "jobs: [\n  - name: : :\n")
    (entry,) = invoke(repo, "workflow", "validate", "broken").data["workflows"]
    assert entry["valid"] is False
    (problem,) = entry["problems"]
    assert problem["path"] == "" and problem["message"].startswith("malformed YAML in workflows/workflow-broken.yaml")
    assert entry["errors"] == [problem["message"]]
