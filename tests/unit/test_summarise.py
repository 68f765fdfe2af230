"""`swamp summarise` / `summarize` (issue 26): what the repository did
lately — runs by status, failures, workflows and models, data written and
who — over --since, with --limit capping lists and never counts. It only
reads; it does not run on a server (--server is refused, saying so)."""

from __future__ import annotations

from tests.helpers import init_repo, invoke, write_workflow

from swamp.util import clock


def _repo(tmp_path):
    repo = init_repo(tmp_path / "r")
    for name, run in (("hello", "echo hello"), ("boom", "exit 3")):
        assert invoke(repo, "model", "create", "command/shell", name, "--global-arg", f"run={run}").code == 0
    write_workflow(repo, "greet", """
        jobs:
          - name: main
            steps:
              - {name: hi, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
    """)
    assert invoke(repo, "model", "method", "run", "hello", "execute").code == 0
    assert invoke(repo, "model", "method", "run", "boom", "execute").code != 0
    assert invoke(repo, "workflow", "run", "greet").code == 0
    return repo


def test_summarise_counts_runs_failures_data_and_who(tmp_path):
    repo = _repo(tmp_path)
    r = invoke(repo, "summarise", "--since", "1d")
    assert r.code == 0, r
    doc = r.data
    assert doc["window"] == "1d"
    assert doc["workflowRuns"] == {"total": 1, "succeeded": 1}
    assert doc["methodRuns"]["total"] == 3 and doc["methodRuns"]["failed"] == 1  # the workflow's step counts too
    assert [(f["kind"], f["name"]) for f in doc["failures"]] == [("method", "boom.execute")]
    assert [w["name"] for w in doc["workflows"]] == ["greet"]
    models = {m["name"]: m for m in doc["models"]}
    assert models["boom"]["failed"] == 1 and models["hello"]["runs"] == 2
    names = {(d["model"], d["name"]): d for d in doc["data"]["names"]}
    assert names[("hello", "result")]["versions"] == 2
    assert doc["data"]["versions"] == sum(d["versions"] for d in doc["data"]["names"]) and doc["data"]["bytes"] > 0
    [who] = doc["who"]
    assert who["actor"].startswith("user:") and who["runs"] == 4 and who["failed"] == 1

    human = invoke(repo, "summarize", "--since", "1d", json=False)  # upstream's other spelling
    assert human.code == 0 and "boom.execute" in human.stdout and "workflow runs: 1" in human.stdout


def test_the_window_and_the_limit(tmp_path):
    repo = _repo(tmp_path)
    real = clock.now()
    clock.set_clock(lambda: real + 3 * 86400)  # three days later
    try:
        later = invoke(repo, "summarise", "--since", "1d").data
    finally:
        clock.set_clock(None)
    assert later["methodRuns"] == {"total": 0} and later["data"]["versions"] == 0 and later["who"] == []

    capped = invoke(repo, "summarise", "--limit", "1").data
    assert len(capped["models"]) == 1 and len(capped["data"]["names"]) == 1
    assert capped["methodRuns"]["total"] == 3  # counts are of everything

    bad = invoke(repo, "summarise", "--since", "yesterday")
    assert bad.code != 0 and bad.error["code"] == "usage" and "--since" in bad.error["error"]


def test_summarise_does_not_run_on_a_server(tmp_path):
    repo = init_repo(tmp_path / "r")
    r = invoke(repo, "summarise", "--server", "http://127.0.0.1:9")
    assert r.code == 2 and "runs only locally" in r.error["error"]
