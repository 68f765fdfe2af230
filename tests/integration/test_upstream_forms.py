"""The argument forms and behaviours upstream's scripts rely on (issue 26,
"Forms and behaviours"): each test is one form, driven through `swamp` as
a script would call it."""

from __future__ import annotations

from tests.helpers import cli, init_repo, ok, run_hello, snapshot, write_type, write_workflow

HELLO_FLOW = """
jobs:
  - name: main
    steps:
      - name: say
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
"""


def _hello_repo(path):
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    return repo


# ------------------------------------------------ 1. run id or name
def test_workflow_history_get_and_logs_take_a_workflow_name_for_its_newest_run(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    write_workflow(repo, "deploy", HELLO_FLOW)
    ok(repo, "workflow", "run", "deploy")
    newest = ok(repo, "workflow", "run", "deploy")["id"]
    got = ok(repo, "workflow", "history", "get", "deploy")
    assert got["id"] == newest and got["workflowName"] == "deploy"
    assert ok(repo, "workflow", "history", "get", newest[:8])["id"] == newest  # an id still works
    assert ok(repo, "workflow", "history", "logs", "deploy")["id"] == newest
    missing = cli(repo, "workflow", "history", "get", "nope")
    assert missing.code == 1 and missing.error["code"] == "not_found"


def test_model_output_get_takes_a_model_name_for_its_newest_run(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    run_hello(repo, "one")
    newest = run_hello(repo, "two")
    newest_id = newest.get("outputId") or newest.get("id")
    for words in (("model", "output", "get"), ("model", "method", "history", "get")):
        got = ok(repo, *words, "hello")
        assert got["modelName"] == "hello" and got["id"] == newest_id, words
    assert ok(repo, "model", "output", "logs", "hello")["id"] == newest_id
    assert ok(repo, "model", "output", "get", newest_id[:8])["id"] == newest_id
    ok(repo, "model", "create", "command/shell", "idle", "--global-arg", "run=true")
    never = cli(repo, "model", "output", "get", "idle")
    assert never.code == 1 and "no method runs" in never.error["error"] and "method run idle" in never.error["hint"]


# ------------------------------------------------ 2. run gc's default retention
def test_run_gc_keeps_30_days_by_default(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    run_hello(repo, "recent")
    before = snapshot(repo)
    dry = ok(repo, "run", "gc", "--dry-run")
    assert dry["dryRun"] and dry["runs"] == 0 and snapshot(repo) == before  # a run of today is kept
    forced = ok(repo, "run", "gc", "--force")
    assert forced["runs"] == 0 and not forced["dryRun"]
    assert ok(repo, "run", "gc", "-y")["runs"] == 0
    asked = cli(repo, "run", "gc")  # no terminal, nothing said: refused, not done
    assert asked.code == 2 and "-y" in asked.error["error"] and "30d" in asked.error["error"]
    assert len(ok(repo, "run", "history")) == 1


# ------------------------------------------------ 3. model validate names a missing argument
NEED = '''
from pydantic import BaseModel
from swamp import Context, ModelType

class A(BaseModel):
    size: int
    colour: str = "green"

need = ModelType("acme/need", version="2026.11.30.1")

@need.method(description="Write", arguments=A)
def write(args, ctx: Context) -> None:
    pass
'''


def test_model_validate_fails_naming_a_required_argument_nothing_gives(tmp_path):
    repo = init_repo(tmp_path / "r")
    write_type(repo, "need.py", NEED)
    folder = repo / "models" / "acme" / "need"
    folder.mkdir(parents=True)
    (folder / "m.yaml").write_text("type: acme/need\nname: m\nmethods:\n  write:\n    arguments:\n      colour: red\n")
    r = cli(repo, "model", "validate", "m")
    assert r.code == 1 and r.data["valid"] is False
    [error] = r.data["models"][0]["errors"]
    assert "methods.write.arguments.size" in error and "add it under methods.write.arguments" in error
    human = cli(repo, "model", "validate", "m", json=False)
    assert human.code == 1 and "size" in human.stdout + human.stderr

    # a workflow step that gives it makes it supplied
    write_workflow(repo, "w", """
        jobs:
          - name: main
            steps:
              - name: s
                task: {type: model_method, modelIdOrName: m, methodName: write, inputs: {size: 3}}
        """)
    assert ok(repo, "model", "validate", "m")["valid"] is True
    # a method the definition does not configure is left to the run (--input)
    (folder / "n.yaml").write_text("type: acme/need\nname: n\n")
    assert ok(repo, "model", "validate", "n")["valid"] is True


# ------------------------------------------------ 4. a predicate over a field some records lack
def test_data_query_matches_the_records_that_have_the_field(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    ok(repo, "model", "create", "command/shell", "tagged", "--global-arg", "run=echo t")
    ok(repo, "model", "method", "run", "tagged", "execute", "--tag", "env=dev")
    run_hello(repo, "untagged")  # its data has no env tag
    rows = ok(repo, "data", "query", 'tags.env == "dev"')
    assert rows and {r["model"] for r in rows} == {"tagged"}
    assert ok(repo, "data", "query", 'tags.env == "prod"') == []
    # a field no record can have is still an error, not an empty answer
    bad = cli(repo, "data", "query", 'nosuchfield == "dev"')
    assert bad.code == 1 and "known fields" in bad.error["hint"]
    wrong = cli(repo, "data", "query", "tags.env > 3")  # a type error is not a missing key
    assert wrong.code == 1 and wrong.error["code"] != "internal"


# ------------------------------------------------ 5. a workflow's report, read as data
def test_a_workflow_report_is_read_by_data_get_with_the_name_data_list_shows(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    write_workflow(repo, "deploy", "reports: [workflow-summary]\n" + HELLO_FLOW.lstrip())
    ok(repo, "workflow", "run", "deploy")
    [row] = [r for r in ok(repo, "data", "list") if r["name"] == "report-workflow-summary"]
    assert row["model"] == "deploy" and row["modelType"] == "swamp/workflow"
    got = ok(repo, "data", "get", row["model"], row["name"])
    assert got["content"]["report"] == "workflow-summary" and got["version"] == row["latestVersion"]
    assert ok(repo, "data", "get", row["modelId"], row["name"])["version"] == row["latestVersion"]
    assert [v["version"] for v in ok(repo, "data", "versions", "deploy", row["name"])] == [1]
    assert [r["name"] for r in ok(repo, "data", "list", "deploy")] == ["report-workflow-summary"]
    # a model of the same name wins the name; the workflow's data is then listed (and read) by its id
    ok(repo, "model", "create", "command/shell", "deploy", "--global-arg", "run=true")
    [row] = [r for r in ok(repo, "data", "list") if r["name"] == "report-workflow-summary"]
    assert row["model"] == row["modelId"]
    assert ok(repo, "data", "get", row["model"], row["name"])["version"] == 1


# ------------------------------------------------ 6. a repository of a newer swamp
def test_a_repository_naming_a_newer_swamp_is_refused_with_an_upgrade_hint(tmp_path):
    from swamp import __version__
    from swamp.repo.swamp_version import is_newer

    repo = _hello_repo(tmp_path / "r")
    marker = repo / ".swamp.yaml"
    marker.write_text(marker.read_text().replace(f"swampVersion: {__version__}", "swampVersion: 99.0.0"))
    before = snapshot(repo)
    for args in (("model", "search"), ("data", "list"), ("model", "method", "run", "hello", "execute"),
                 ("repo", "upgrade")):
        r = cli(repo, *args)
        assert r.code == 1 and r.error["code"] == "swamp_too_old", args
        assert "99.0.0" in r.error["error"] and "upgrade swamp" in r.error["hint"]
    assert snapshot(repo) == before  # nothing written, the marker kept
    assert is_newer("0.2", "0.1.9") and not is_newer("0.1.0", "0.1") and not is_newer("0.1.0rc1", "0.1.0")
    assert not is_newer("not-a-version", "0.1.0")


# ------------------------------------------------ 7a. scoped workflow names
def test_a_scoped_workflow_name_is_created_run_and_called_as_a_child(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    made = ok(repo, "workflow", "create", "@acme/child")
    assert made["path"] == "workflows/@acme/workflow-child.yaml"
    write_workflow(repo, "parent", """
        jobs:
          - name: main
            steps:
              - name: call
                task: {type: workflow, workflowIdOrName: "@acme/child"}
        """)
    assert ok(repo, "workflow", "validate")["valid"] is True
    assert ok(repo, "workflow", "run", "parent")["status"] == "succeeded"
    assert ok(repo, "workflow", "history", "get", "@acme/child")["workflowName"] == "@acme/child"
    assert "@acme/child" in {w["name"] for w in ok(repo, "workflow", "search")}
    # a name that could leave its folder, or a scope in capitals, is refused
    for bad in ("@acme/../x", "@acme/a/b", "@Acme/x", "acme/x"):
        r = cli(repo, "workflow", "create", bad)
        assert r.code == 1 and r.error["code"] == "validation", bad
    assert not (repo / "workflows" / "x.yaml").exists() and not (repo / "x").exists()
