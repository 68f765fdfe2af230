"""Completion of a workflow's step names (approve, reject, signal) and of
run ids (workflow history get/logs, --run), read from the checkout without
changing it."""

from __future__ import annotations

from tests.e2e.test_completions import complete
from tests.helpers import init_repo, ok, snapshot, write_shell, write_workflow


def test_step_names_of_the_workflow_named_and_run_ids(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "hello", """
        type: command/shell
        name: hello
        globalArguments:
          run: echo hi
    """)
    write_workflow(repo, "deploy", """
        jobs:
          - name: j
            steps:
              - {name: build, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
              - {name: ship, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
    """)
    assert complete("swamp workflow approve deploy ", repo) == ["build", "ship"]
    assert complete("swamp workflow reject deploy s", repo) == ["ship"]
    assert complete("swamp workflow signal deploy b", repo) == ["build"]
    assert complete("swamp workflow approve nosuch ", repo) == []
    assert complete("swamp workflow history get ", repo) == []  # no runs yet
    first = ok(repo, "workflow", "run", "deploy")["id"]
    second = ok(repo, "workflow", "run", "deploy")["id"]
    before = snapshot(repo)
    assert complete("swamp workflow history get ", repo) == sorted([first, second])
    assert complete(f"swamp workflow history logs {first[:6]}", repo) == [first]
    assert first in complete("swamp workflow approve deploy build --run ", repo)
    assert snapshot(repo) == before
