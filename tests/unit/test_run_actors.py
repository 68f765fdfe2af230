"""Who a run acts for, in the engine: the actor a run starts with is its
steps' and its nested runs' (and their steps'), and whoever continues it
takes over from there; approvals and cancels name their own."""

from __future__ import annotations

from swamp.app import workflows
from swamp.models.outputs import find_record
from swamp.repo.context import Repo
from swamp.workflows import records
from tests.helpers import make_repo, steps, write_workflow


def _work(model: str) -> str:
    return f"task: {{type: model_method, modelIdOrName: {model}, methodName: work, inputs: {{value: x}}}}"


def _by(repo, output_id: str) -> str:
    return find_record(Repo.open(repo).datastore, output_id)[1].initiatedBy


def test_a_nested_run_and_every_step_act_for_who_started_or_continued_the_run(tmp_path):
    repo = make_repo(tmp_path / "repo")
    write_workflow(repo, "child", f"jobs:\n  - name: c\n    steps:\n      - {{name: s, {_work('w0')}}}\n")
    write_workflow(repo, "parent", f"""
        jobs:
          - name: p
            steps:
              - {{name: first, {_work('w1')}}}
              - {{name: gate, dependsOn: [{{step: first}}], task: {{type: manual_approval, prompt: go}}}}
              - {{name: call, dependsOn: [{{step: gate}}], task: {{type: workflow, workflowIdOrName: child}}}}
        """)
    r = Repo.open(repo)
    started = workflows.run(r, "parent", {}, by="schedule:nightly").run
    assert started.status == "suspended" and started.initiatedBy == "schedule:nightly"
    assert _by(repo, steps(started)["p/first"].outputId) == "schedule:nightly"

    decided = workflows.decide(r, "parent", "gate", "approved", None, None, by="token:ops (user:alice)")
    assert decided["decidedBy"] == "token:ops (user:alice)"
    done = workflows.resume(r, "parent", started.id, {}, by="token:ops (user:alice)").run
    assert done.status == "succeeded" and done.initiatedBy == "schedule:nightly"
    assert done.resumedBy == "token:ops (user:alice)"
    call = steps(done)["p/call"]
    child = records.load(r.datastore, call.childWorkflowId, call.childRunId)
    assert child.initiatedBy == "token:ops (user:alice)"  # started while the resumer's part ran
    assert _by(repo, steps(child)["c/s"].outputId) == "token:ops (user:alice)"


def test_a_cancel_names_who_cancelled_and_a_restart_clears_it(tmp_path):
    repo = make_repo(tmp_path / "repo")
    write_workflow(repo, "gated", f"""
        jobs:
          - name: j
            steps:
              - {{name: gate, task: {{type: manual_approval, prompt: go}}}}
              - {{name: after, dependsOn: [{{step: gate}}], {_work('w0')}}}
        """)
    r = Repo.open(repo)
    run = workflows.run(r, "gated", {}, by="webhook:gh").run
    out = workflows.cancel(r, "gated", run.id, by="token:ops")
    assert out["status"] == "cancelled"
    cancelled = records.load(r.datastore, run.workflowId, run.id)
    assert cancelled.cancelledBy == "token:ops" and cancelled.initiatedBy == "webhook:gh"
    again = workflows.resume(r, "gated", run.id, {}, from_step="gate", by="token:ops").run
    assert again.status == "suspended" and again.cancelledBy is None and again.resumedBy == "token:ops"


def test_whoever_continues_a_run_last_is_who_its_next_steps_act_for(tmp_path):
    repo = make_repo(tmp_path / "repo")
    write_workflow(repo, "twice", f"""
        jobs:
          - name: j
            steps:
              - {{name: one, task: {{type: manual_approval, prompt: go}}}}
              - {{name: mid, dependsOn: [{{step: one}}], {_work('w0')}}}
              - {{name: two, dependsOn: [{{step: mid}}], task: {{type: manual_approval, prompt: go}}}}
              - {{name: end, dependsOn: [{{step: two}}], {_work('w1')}}}
        """)
    r = Repo.open(repo)
    run = workflows.run(r, "twice", {}, by="token:alice").run
    workflows.decide(r, "twice", "one", "approved", None, None, by="token:bob")
    mid = workflows.resume(r, "twice", run.id, {}, by="token:bob").run
    assert mid.status == "suspended" and mid.resumedBy == "token:bob"
    assert _by(repo, steps(mid)["j/mid"].outputId) == "token:bob"
    workflows.decide(r, "twice", "two", "approved", None, None, by="token:alice")
    done = workflows.resume(r, "twice", run.id, {}, by="token:alice").run
    assert done.status == "succeeded" and done.resumedBy is None  # continued by who started it
    assert _by(repo, steps(done)["j/end"].outputId) == "token:alice"
