"""Re-running a failed run from its failure (workflows/rerun.py): only the
steps that failed or did not run run again, the succeeded ones keep their
outcome and data (later steps read that data as before), recorded as a new
run linked to the old one; runs that cannot be re-run are refused."""

from __future__ import annotations

import pytest

from swamp.errors import ConflictError, NotFoundError
from tests.helpers import cli, decide, init_repo, resume, run, steps, visible_versions, write_shell, write_workflow

#: appends a line to NAME.ran each time it runs; fails while no file "fixed" is there when told to
COUNTED = """
type: command/shell
name: {name}
globalArguments:
  run: 'echo ran >> {name}.ran; echo {name}-output{check}'
"""

PIPELINE = """
jobs:
  - name: build
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: first, methodName: execute}
      - name: second
        dependsOn: [{step: first}]
        task: {type: model_method, modelIdOrName: second, methodName: execute}
  - name: ship
    dependsOn: [{job: build}]
    steps:
      - name: third
        task:
          type: model_method
          modelIdOrName: third
          methodName: execute
          inputs: {run: "echo ran >> third.ran; echo got ${{ data.latest('first', 'result').content.stdout }}"}
"""


def _counted(repo, name, *, fails_until_fixed=False):
    write_shell(repo, name, COUNTED.format(name=name, check="; test -f fixed" if fails_until_fixed else ""))


def _ran(repo, name) -> int:
    p = repo / f"{name}.ran"
    return len(p.read_text().splitlines()) if p.exists() else 0


def _versions(repo, model):
    return sorted((meta["name"], meta["version"]) for _, meta, _ in visible_versions(repo)
                  if meta["owner"]["definitionName"] == model)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    _counted(repo, "first")
    _counted(repo, "second", fails_until_fixed=True)
    write_shell(repo, "third", "type: command/shell\nname: third\nglobalArguments: {}\n")
    write_workflow(repo, "pipe", PIPELINE)
    return repo


def _failed_run(repo):
    old = run(repo, "pipe")
    assert old.status == "failed" and old.failedStep == "build/second", old
    return old


def test_only_the_failed_step_and_what_did_not_run_run_again(repo):
    old = _failed_run(repo)
    first_versions = _versions(repo, "first")
    (repo / "fixed").touch()
    new = run(repo, "pipe", from_failed=old.id)
    assert new.status == "succeeded" and new.id != old.id and new.rerunOf == old.id
    assert (_ran(repo, "first"), _ran(repo, "second"), _ran(repo, "third")) == (1, 2, 1)
    assert _versions(repo, "first") == first_versions  # no new version of the kept step's data
    kept = steps(new)["build/first"]
    assert kept.reusedFrom == old.id and kept.outputId == steps(old)["build/first"].outputId
    assert steps(new)["build/second"].reusedFrom is None


def test_later_steps_read_the_kept_steps_data(repo):
    old = _failed_run(repo)
    (repo / "fixed").touch()
    new = run(repo, "pipe", from_failed=old.id)
    assert new.status == "succeeded"
    from swamp.data.repository import DataRepository
    from swamp.repo.context import Repo

    r = Repo.open(repo)
    data = DataRepository(r.datastore)
    out = steps(new)["ship/third"]
    art = next(a for a in out.dataArtifacts if a["name"] == "result")
    from swamp.models.definitions import find_definition

    d = find_definition(r, "third")[1]
    content = data.content(data.get(d.type, d.id, "result", art["version"]))
    assert b"got first-output" in content


def test_a_rerun_that_fails_again_can_itself_be_rerun(repo):
    old = _failed_run(repo)
    again = run(repo, "pipe", from_failed=old.id)
    assert again.status == "failed" and steps(again)["build/first"].reusedFrom == old.id
    (repo / "fixed").touch()
    last = run(repo, "pipe", from_failed=again.id)
    assert last.status == "succeeded" and last.rerunOf == again.id
    assert steps(last)["build/first"].reusedFrom == old.id  # where its outcome really comes from
    assert _ran(repo, "first") == 1


def test_only_the_failed_items_of_a_foreach_run_again(repo):
    write_shell(repo, "item", """
        type: command/shell
        name: item
        globalArguments: {}
    """)
    write_workflow(repo, "items", """
        jobs:
          - name: main
            steps:
              - name: each
                forEach: {item: x, in: [a, b, c]}
                task:
                  type: model_method
                  modelIdOrName: item
                  methodName: execute
                  inputs: {run: "echo ${{ self.x }} >> items.ran; test ${{ self.x }} != b || test -f fixed"}
    """)
    old = run(repo, "items")
    assert old.status == "failed"
    (repo / "fixed").touch()
    new = run(repo, "items", from_failed=old.id)
    assert new.status == "succeeded"
    assert (repo / "items.ran").read_text().split() == ["a", "b", "c", "b"]
    assert {s.name: bool(s.reusedFrom) for s in new.jobs[0].steps} == {"each-a": True, "each-b": False,
                                                                        "each-c": True}


def test_an_approval_is_asked_again(repo):
    write_workflow(repo, "gated", """
        jobs:
          - name: main
            steps:
              - name: gate
                task: {type: manual_approval, prompt: "go?"}
              - name: second
                dependsOn: [{step: gate}]
                task: {type: model_method, modelIdOrName: second, methodName: execute}
    """)
    assert run(repo, "gated").status == "suspended"
    decide(repo, "gated", "gate")
    old = resume(repo, "gated")
    assert old.status == "failed"
    new = run(repo, "gated", from_failed=old.id)
    assert new.status == "suspended" and steps(new)["main/gate"].status == "waiting_approval"
    assert _ran(repo, "second") == 1


@pytest.mark.parametrize("make, words", [
    ("succeeded", "is succeeded; --from-failed re-runs a failed or cancelled run"),
    ("suspended", "is suspended"),
])
def test_a_run_that_did_not_fail_is_refused(repo, make, words):
    if make == "succeeded":
        (repo / "fixed").touch()
        target = run(repo, "pipe")
    else:
        write_workflow(repo, "pipe", """
            jobs:
              - name: main
                steps:
                  - {name: gate, task: {type: manual_approval, prompt: "go?"}}
        """)
        target = run(repo, "pipe")
    with pytest.raises(ConflictError, match=words):
        run(repo, "pipe", from_failed=target.id)


def test_a_run_of_another_workflow_is_not_found(repo):
    old = _failed_run(repo)
    write_workflow(repo, "other", """
        jobs:
          - name: build
            steps:
              - {name: first, task: {type: model_method, modelIdOrName: first, methodName: execute}}
    """)
    with pytest.raises(NotFoundError, match="workflow 'other' has no run"):
        run(repo, "other", from_failed=old.id)
    assert _ran(repo, "first") == 1


def test_a_workflow_changed_since_the_run_is_refused(repo):
    old = _failed_run(repo)
    write_workflow(repo, "pipe", PIPELINE.replace("name: third", "name: fourth"))
    from swamp.errors import ValidationError

    with pytest.raises(ValidationError, match="changed since run"):
        run(repo, "pipe", from_failed=old.id)


def test_the_cli_reruns_by_run_id_alone(repo):
    old = _failed_run(repo)
    (repo / "fixed").touch()
    shown = cli(repo, "workflow", "run", "--from-failed", old.id[:8], json=False)
    assert shown.code == 0, shown
    assert f"(re-runs run {old.id})" in shown.stdout and f"kept from run {old.id}" in shown.stdout
    rid = cli(repo, "workflow", "history", "pipe").data[0]["id"]
    doc = cli(repo, "workflow", "history", "get", rid).data
    assert doc["rerunOf"] == old.id
    assert doc["jobs"][0]["steps"][0]["reusedFrom"] == old.id
    human = cli(repo, "workflow", "history", "get", rid, json=False).stdout
    assert f"re-runs run {old.id}" in human and f"kept from run {old.id}" in human


def test_the_cli_refuses_an_unknown_run_clearly(repo):
    shown = cli(repo, "workflow", "run", "--from-failed", "nosuchrun")
    assert shown.code != 0 and "Traceback" not in shown.stderr
    assert "no workflow run with id 'nosuchrun'" in shown.error["error"]
