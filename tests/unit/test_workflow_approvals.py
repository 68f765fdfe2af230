"""manual_approval: the run suspends with its inputs kept; approve or
reject records the decision; resume continues from the record without
running a finished step again. Also cancel."""

from __future__ import annotations

import pytest

from swamp.errors import ConflictError, NotFoundError
from swamp.util import clock
from tests.helpers import (decide, make_repo, resume, run, spans, statuses, steps,
                                         write_workflow)


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


GATED = """
inputs:
  properties:
    who: {type: string}
  required: [who]
jobs:
  - name: build
    steps:
      - name: compile
        task: {type: model_method, modelIdOrName: w0, methodName: work, inputs: {value: "${{ inputs.who }}"}}
      - name: gate
        dependsOn: [{step: compile}]
        task: {type: manual_approval, prompt: "ship it, ${{ inputs.who }}?"}
      - name: side
        task: {type: model_method, modelIdOrName: w2, methodName: work, inputs: {value: side}}
      - name: ship
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: w1, methodName: work, inputs: {value: "${{ inputs.who }}"}}
  - name: announce
    dependsOn: [{job: build}]
    steps:
      - {name: say, task: {type: model_method, modelIdOrName: w3, methodName: work, inputs: {value: done}}}
"""


def load(repo, r):
    from swamp.repo.context import Repo
    from swamp.workflows import records

    return records.load(Repo.open(repo).datastore, r.workflowId, r.id)


def test_suspend_approve_resume(repo):
    write_workflow(repo, "gated", GATED)
    r = run(repo, "gated", {"who": "ana"})
    assert r.status == "suspended"
    assert statuses(r) == {"build/compile": "succeeded", "build/gate": "waiting_approval",
                           "build/side": "succeeded", "build/ship": "pending", "announce/say": "pending"}
    assert steps(r)["build/gate"].approval.prompt == "ship it, ana?"
    assert [j.status for j in r.jobs] == ["waiting_approval", "pending"]
    stored = load(repo, r)
    assert stored.status == "suspended" and stored.inputs == {"who": "ana"} and stored.completedAt is None

    decision = decide(repo, "gated", "gate", "approved", "looks good")
    assert decision["decision"] == "approved" and decision["runId"] == r.id and decision["job"] == "build"
    r2 = resume(repo, "gated")
    assert r2.id == r.id and r2.status == "succeeded"
    assert all(v == "succeeded" for v in statuses(r2).values())
    gate = steps(r2)["build/gate"].approval
    assert gate.decision == "approved" and gate.reason == "looks good" and gate.decidedBy
    # compile and side ran once; ship and say once, after the approval.
    assert sorted(v for _, _, v, _, _ in spans(repo)) == ["ana", "ana", "done", "side"]
    final = load(repo, r2)
    assert final.status == "succeeded" and final.inputs is None and final.completedAt


def test_only_a_suspended_run_can_be_claimed_for_resume(repo):
    from swamp.repo.context import Repo
    from swamp.workflows import runs

    write_workflow(repo, "gated", GATED)
    r = run(repo, "gated", {"who": "al"})
    ds = Repo.open(repo).datastore
    assert runs.claim_for_resume(ds, r.workflowId, r.id).status == "running"
    with pytest.raises(ConflictError, match="is running; only a suspended run can be resumed"):
        runs.claim_for_resume(ds, r.workflowId, r.id)
    with pytest.raises(ConflictError):
        resume(repo, "gated", r.id)


def test_reject_fails_the_step_and_skips_its_dependents(repo):
    write_workflow(repo, "gated", GATED)
    run(repo, "gated", {"who": "bo"})
    decide(repo, "gated", "build/gate", "rejected", "not today")
    r2 = resume(repo, "gated")
    assert r2.status == "failed"
    s = steps(r2)
    assert s["build/gate"].status == "failed" and "not today" in s["build/gate"].error
    assert s["build/ship"].skipReason == "dependency" and r2.jobs[1].skipReason == "dependency"
    assert r2.failedStep == "build/gate"


def test_resume_inputs_merge_over_the_saved_ones(repo):
    write_workflow(repo, "gated", GATED)
    run(repo, "gated", {"who": "cy"})
    decide(repo, "gated", "gate")
    r2 = resume(repo, "gated", inputs={"who": "dee"})
    assert sorted(v for _, _, v, _, _ in spans(repo)) == ["cy", "dee", "done", "side"]
    assert r2.status == "succeeded"


def test_without_a_decision_resume_suspends_again(repo):
    write_workflow(repo, "gated", GATED)
    r = run(repo, "gated", {"who": "ed"})
    r2 = resume(repo, "gated")
    assert r2.status == "suspended" and statuses(r2) == statuses(r)


def test_an_approval_times_out(repo):
    write_workflow(repo, "timed", """
        jobs:
          - name: j
            steps:
              - {name: gate, task: {type: manual_approval, prompt: "ok?", timeout: 60}}
        """)
    run(repo, "timed")
    later = clock.now() + 61
    clock.set_clock(lambda: later)
    try:
        with pytest.raises(ConflictError, match="too late to decide"):
            decide(repo, "timed", "gate")  # past the gate's timeout: refused
        r2 = resume(repo, "timed")
    finally:
        clock.set_clock(None)
    assert r2.status == "failed" and "no decision within 60 s" in steps(r2)["j/gate"].error


def test_decisions_are_refused_when_there_is_nothing_to_decide(repo):
    write_workflow(repo, "gated", GATED)
    with pytest.raises(NotFoundError, match="no suspended run"):
        decide(repo, "gated", "gate")
    run(repo, "gated", {"who": "fa"})
    with pytest.raises(NotFoundError, match="no step 'gat' waiting") as e:
        decide(repo, "gated", "gat")
    assert e.value.hint == "did you mean 'gate'?"
    decide(repo, "gated", "gate")
    with pytest.raises(NotFoundError):
        decide(repo, "gated", "gate")  # decided already: no longer waiting


def test_an_approval_inside_a_nested_workflow(repo):
    write_workflow(repo, "inner", """
        jobs:
          - name: i
            steps:
              - {name: gate, task: {type: manual_approval, prompt: "inner ok?"}}
              - {name: after, dependsOn: [{step: gate}], task: {type: model_method, modelIdOrName: w0, methodName: work, inputs: {value: inner}}}
        """)
    write_workflow(repo, "outer", """
        jobs:
          - name: o
            steps:
              - {name: call, task: {type: workflow, workflowIdOrName: inner}}
              - {name: last, dependsOn: [{step: call}], task: {type: model_method, modelIdOrName: w1, methodName: work, inputs: {value: outer}}}
        """)
    r = run(repo, "outer")
    assert r.status == "suspended" and statuses(r)["o/call"] == "waiting_approval"
    from swamp.repo.context import Repo
    from swamp.app.workflow_files import run_json

    assert run_json(Repo.open(repo), r)["approvalRequired"] == [
        {"job": "i", "step": "gate", "prompt": "inner ok?", "workflowName": "inner",
         "runId": steps(r)["o/call"].childRunId}]
    d = decide(repo, "outer", "gate")
    assert d["nestedRunId"] == steps(r)["o/call"].childRunId
    r2 = resume(repo, "outer")
    assert r2.status == "succeeded" and steps(r2)["o/call"].childRunId == steps(r)["o/call"].childRunId
    assert sorted(v for _, _, v, _, _ in spans(repo)) == ["inner", "outer"]


def test_cancel_a_suspended_run(repo):
    write_workflow(repo, "gated", GATED)
    r = run(repo, "gated", {"who": "gu"})
    from swamp.app import workflows
    from swamp.repo.context import Repo

    out = workflows.cancel(Repo.open(repo), "gated", None)
    assert out == {"id": r.id, "workflowName": "gated", "status": "cancelled", "cancelRequested": False}
    stored = load(repo, r)
    assert stored.status == "cancelled" and stored.inputs is None
    with pytest.raises(NotFoundError):
        resume(repo, "gated")
    with pytest.raises(ConflictError, match="already cancelled"):
        workflows.cancel(Repo.open(repo), "gated", r.id)


def test_a_cancel_request_stops_a_running_run(repo, monkeypatch):
    from swamp.workflows import records, run_state, run_stop

    monkeypatch.setattr(run_stop, "CANCEL_CHECK_INTERVAL", 0)
    write_workflow(repo, "long", "jobs:\n  - name: j\n    steps:\n" + "".join(
        f"      - {{name: s{i}, task: {{type: model_method, modelIdOrName: w0, methodName: work}}}}\n"
        for i in range(5)))
    original = run_state.RunState.set_done

    def set_done(self, st, e, status, **kw):
        original(self, st, e, status, **kw)
        if e.name == "s1":  # as if `workflow cancel` ran in another process now
            self.ds.write_bytes(records.cancel_path(self.run.workflowId, self.run.id), b"x")

    monkeypatch.setattr(run_state.RunState, "set_done", set_done)
    r = run(repo, "long")
    assert r.status == "cancelled"
    assert statuses(r) == {"j/s0": "succeeded", "j/s1": "succeeded", "j/s2": "pending", "j/s3": "pending",
                           "j/s4": "pending"}
    assert not (repo / ".swamp" / records.cancel_path(r.workflowId, r.id)).exists()
