"""Changing a stored run from another command: claiming a suspended run to
resume it, recording an approval decision, cancelling. Each reads, checks
and writes the record under the run's lock, so two commands never both
act on one state."""

from __future__ import annotations

import os

from swamp.datastore.base import Datastore
from swamp.errors import ConflictError, NotFoundError
from swamp.util import clock
from swamp.util.ids import holder, hostname
from swamp.util.names import did_you_mean
from swamp.workflows import records
from swamp.workflows.records import JobRun, StepRun, WorkflowRun


def _session(ds: Datastore, run_id: str, command: str):
    return ds.session(mutating=True, locks=[records.run_lock(run_id)], command=command)


def pick(ds: Datastore, workflow_id: str, run_id: str | None, statuses: tuple[str, ...]) -> WorkflowRun:
    """The run given by id, or the newest run in one of ``statuses``."""
    with ds.session(mutating=False):
        if run_id:
            return records.load(ds, workflow_id, run_id)
        found = records.history(ds, workflow_id)
    for run in found:
        if run.status in statuses:
            return run
    raise NotFoundError(f"this workflow has no {' or '.join(statuses)} run",
                        hint="list runs with 'swamp workflow history NAME'")


def claim_for_resume(ds: Datastore, workflow_id: str, run_id: str) -> WorkflowRun:
    with _session(ds, run_id, "workflow resume"):
        run = records.load(ds, workflow_id, run_id)
        if run.status != "suspended":
            raise ConflictError(f"run {run_id} is {run.status}; only a suspended run can be resumed")
        run.status = "running"
        run.host, run.pid = hostname(), os.getpid()
        records.save(ds, run)
    return run


def decide(ds: Datastore, workflow_id: str, run_id: str | None, step: str, decision: str,
           reason: str | None) -> dict:
    """Record ``approved`` or ``rejected`` for a step waiting for approval
    (in the run, or in a suspended nested run it started). ``step`` is a
    step name, or ``job/step`` where names repeat across jobs."""
    run = pick(ds, workflow_id, run_id, ("suspended",))
    target = _find_waiting(ds, run, step)
    if target is None:
        waiting = sorted(f"{j.name}/{s.name}" for _, j, s in waiting_steps(ds, run))
        raise NotFoundError(
            f"run {run.id} has no step {step!r} waiting for approval",
            hint=(did_you_mean(step, waiting + [w.split('/', 1)[1] for w in waiting])
                  or (f"waiting: {', '.join(waiting)}" if waiting else "no step of this run is waiting")))
    owner, job_name, step_name = target
    with _session(ds, owner.id, f"workflow {decision}"):
        fresh = records.load(ds, owner.workflowId, owner.id)
        if fresh.status != "suspended":
            raise ConflictError(f"run {owner.id} is {fresh.status}; decisions are taken while it is suspended")
        s = next(s for s in fresh.job(job_name).steps if s.name == step_name)
        if s.status != "waiting_approval" or s.approval is None or s.approval.decision:
            raise ConflictError(f"step {step_name!r} is no longer waiting for approval")
        s.approval.decision = decision
        s.approval.decidedBy = holder()
        s.approval.decidedAt = clock.isoformat()
        s.approval.reason = reason
        records.save(ds, fresh)
    out = {"runId": run.id, "workflowName": run.workflowName, "job": job_name, "step": step_name,
           "decision": decision, "decidedBy": s.approval.decidedBy, "decidedAt": s.approval.decidedAt}
    if owner.id != run.id:
        out["nestedRunId"] = owner.id
    if reason:
        out["reason"] = reason
    return out


def waiting_steps(ds: Datastore, run: WorkflowRun) -> list[tuple[WorkflowRun, JobRun, StepRun]]:
    """The approvals ``run`` waits for, its nested runs' included, as
    (the run that owns the step, job, step)."""
    out = []
    for j, s in run.steps():
        if s.status != "waiting_approval":
            continue
        if s.task == "manual_approval" and s.approval and not s.approval.decision:
            out.append((run, j, s))
        elif s.childRunId and s.childWorkflowId:
            child = records.load(ds, s.childWorkflowId, s.childRunId)
            if child.status == "suspended":
                out += waiting_steps(ds, child)
    return out


def _find_waiting(ds: Datastore, run: WorkflowRun, step: str) -> tuple[WorkflowRun, str, str] | None:
    for owner, j, s in waiting_steps(ds, run):
        if step in (s.name, f"{j.name}/{s.name}"):
            return owner, j.name, s.name
    return None


def cancel(ds: Datastore, workflow_id: str, run_id: str | None) -> dict:
    """Cancel a suspended run at once (with the nested runs it waits on);
    ask a running one to stop after its steps in flight (or cancel it at
    once when its process is gone)."""
    run = pick(ds, workflow_id, run_id, ("running", "suspended", "pending"))
    if run.status in ("running", "pending") and _alive(run):
        with ds.session(mutating=True, command="workflow cancel"):
            ds.write_bytes(records.cancel_path(run.workflowId, run.id), f"{holder()} {clock.isoformat()}\n".encode())
        return {"id": run.id, "workflowName": run.workflowName, "status": run.status, "cancelRequested": True}
    with _session(ds, run.id, "workflow cancel"):
        fresh = records.load(ds, run.workflowId, run.id)
        if fresh.status in ("succeeded", "failed", "cancelled"):
            raise ConflictError(f"run {run.id} already {fresh.status}")
        _mark_cancelled(fresh)
        records.save(ds, fresh)
    for _, s in fresh.steps():
        if s.childRunId and s.childWorkflowId and s.status == "waiting_approval":
            child = records.load(ds, s.childWorkflowId, s.childRunId)
            if child.status == "suspended":
                cancel(ds, child.workflowId, child.id)
    return {"id": fresh.id, "workflowName": fresh.workflowName, "status": fresh.status, "cancelRequested": False}


def _mark_cancelled(run: WorkflowRun) -> None:
    run.status = "cancelled"
    run.inputs = None
    run.completedAt = clock.isoformat()
    for j in run.jobs:
        if j.status not in ("succeeded", "failed", "skipped"):
            j.status = "pending"


def _alive(run: WorkflowRun) -> bool:
    """Whether the process running ``run`` may still be at work. Only a
    process on this host can be checked; one elsewhere is assumed alive."""
    if run.host != hostname() or not run.pid:
        return True
    try:
        os.kill(run.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
