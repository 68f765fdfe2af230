"""`swamp model create --input NAME[:TYPE]` and `--input-schema FILE` declare
a definition's inputs, so a workflow step can pass them (issue 16 item 5:
AGENTS.md's workflow example needed a definition no command could write)."""

from __future__ import annotations

from tests.helpers import cli, init_repo, snapshot, write_workflow

FANOUT = """
    jobs:
      - name: greet
        steps:
          - name: "say-${{ self.item }}"
            forEach: {item: item, in: "${{ ['a', 'b'] }}"}
            task:
              type: model_method
              modelIdOrName: greeter
              methodName: execute
              inputs: {message: "hi-${{ self.item }}", times: 2}
    """


def test_declared_inputs_let_a_workflow_pass_them(tmp_path):
    repo = init_repo(tmp_path / "r")
    made = cli(repo, "model", "create", "command/shell", "greeter", "--input", "message",
               "--input", "times:integer", "--global-arg", "run=echo ${{ inputs.message }}")
    assert made.code == 0, made
    got = cli(repo, "model", "get", "greeter").data
    assert got["inputs"] == {"properties": {"message": {"type": "string"}, "times": {"type": "integer"}},
                             "required": ["message", "times"]}
    write_workflow(repo, "fanout", FANOUT)
    assert cli(repo, "workflow", "validate").code == 0
    run = cli(repo, "workflow", "run", "fanout")
    assert run.code == 0 and run.data["status"] == "succeeded", run
    assert cli(repo, "data", "get", "greeter", "result").data["content"]["stdout"].strip() in {"hi-a", "hi-b"}


def test_an_input_schema_file(tmp_path):
    repo = init_repo(tmp_path / "r")
    (tmp_path / "inputs.yaml").write_text("properties:\n  who: {type: string, default: world}\n")
    assert cli(repo, "model", "create", "command/shell", "hello", "--input-schema", tmp_path / "inputs.yaml",
               "--global-arg", "run=echo hello ${{ inputs.who }}").code == 0
    out = cli(repo, "model", "method", "run", "hello", "execute", "--input", "who=team")
    assert out.code == 0, out
    assert cli(repo, "data", "get", "hello", "result").data["content"]["stdout"].strip() == "hello team"


def test_bad_declarations_are_usage_errors_and_write_nothing(tmp_path):
    repo = init_repo(tmp_path / "r")
    (tmp_path / "list.yaml").write_text("[1, 2]\n")
    before = snapshot(repo)
    for args, words in [(["--input", "x:float"], "unknown type 'float'"),
                        (["--input", "bad-name"], "is not a name"),
                        (["--input-schema", tmp_path / "missing.yaml"], "missing.yaml"),
                        (["--input-schema", tmp_path / "list.yaml"], "not a JSON Schema object")]:
        r = cli(repo, "model", "create", "command/shell", "g", *args)
        assert r.code == 2 and words in r.error["error"] and r.error["hint"], (args, r)
    assert snapshot(repo) == before
