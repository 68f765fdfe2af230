"""Direct type execution (issue 14 item 7): `swamp model method run TYPE
METHOD NAME` runs a type without a hand-written definition; the automatic
definition is kept (not listed by model search) and method arguments win
over the values it keeps."""

from __future__ import annotations

from tests.helpers import cli, init_repo, snapshot, write_type

BOTH = '''
from pydantic import BaseModel
from swamp import Context, ModelType

class G(BaseModel):
    greeting: str = "hello"
    who: str = "world"

class A(BaseModel):
    who: str = "method"

both = ModelType("acme/both", version="2026.11.30.1", global_arguments=G)
both.resource("out")

@both.method(description="Greet", arguments=A)
def greet(args, ctx: Context) -> None:
    ctx.write_resource("out", "out", {"text": f"{args.greeting} {args.who}"})
'''


def test_run_a_type_directly(tmp_path):
    repo = init_repo(tmp_path / "r")
    write_type(repo, "both.py", BOTH)
    r = cli(repo, "model", "method", "run", "command/shell", "execute", "greet", "--input", "run=echo hi")
    assert r.code == 0 and r.data["modelName"] == "greet", r
    assert cli(repo, "data", "get", "greet", "result").data["content"]["stdout"] == "hi"
    # kept: a second run needs no input, and data and model get find it
    assert cli(repo, "model", "method", "run", "command/shell", "execute", "greet").code == 0
    assert [v["version"] for v in cli(repo, "data", "versions", "greet", "result").data] == [1, 2]
    kept = cli(repo, "model", "get", "greet").data
    assert kept["globalArguments"] == {"run": "echo hi"} and kept["type"] == "command/shell"
    assert cli(repo, "model", "search").data == []  # automatic definitions are not listed
    # a key both schemas declare goes to the method; a global-only key to the definition
    assert cli(repo, "model", "method", "run", "acme/both", "greet", "b",
               "--input", "who=you", "--input", "greeting=hey").code == 0
    assert cli(repo, "data", "get", "b", "out").data["content"] == {"text": "hey you"}
    assert cli(repo, "model", "get", "b").data["globalArguments"] == {"greeting": "hey"}
    before = snapshot(repo)
    assert cli(repo, "model", "method", "run", "command/shell", "execute").code == 2  # NAME missing
    unknown = cli(repo, "model", "method", "run", "acme/both", "greet", "c", "--input", "whom=x")
    assert unknown.code == 1 and "did you mean 'who'" in unknown.error["hint"]
    assert cli(repo, "model", "method", "run", "acme/nope", "greet", "c").code == 1
    assert snapshot(repo) == before
    deleted = cli(repo, "model", "delete", "greet", "-y", "--force")
    assert deleted.code == 0 and sorted(deleted.data["deletedData"]) == ["log", "result"]
    assert cli(repo, "model", "get", "greet").error["code"] == "not_found"


def test_a_workflow_step_runs_a_type_directly(tmp_path):
    repo = init_repo(tmp_path / "r")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-d.yaml").write_text(
        "name: d\njobs:\n  - name: j\n    steps:\n      - name: s\n        task:\n"
        "          type: model_method\n          modelType: command/shell\n          modelName: auto-echo\n"
        "          methodName: execute\n          globalArgs: {run: \"echo ${{ 'from-step' }}\"}\n")
    assert cli(repo, "workflow", "validate", "d").code == 0
    r = cli(repo, "workflow", "run", "d")
    assert r.code == 0, r
    assert cli(repo, "data", "get", "auto-echo", "result").data["content"]["stdout"] == "from-step"
    assert cli(repo, "model", "get", "auto-echo").data["globalArguments"] == {"run": "echo from-step"}
    # the workflow does not depend on it: a run makes it again
    assert cli(repo, "model", "delete", "auto-echo", "-y", "--force").code == 0
    (repo / "workflows" / "workflow-d.yaml").write_text(
        "name: d\njobs:\n  - name: j\n    steps:\n      - name: s\n        task:\n"
        "          type: model_method\n          modelType: command/shell\n          modelIdOrName: x\n"
        "          methodName: execute\n")
    assert cli(repo, "workflow", "validate", "d").code == 1
