"""Changing a stored run from another command: claiming a suspended run to
resume it, recording an approval decision, cancelling. Each function reads,
checks and writes the record; the caller (the application layer) holds the
run's lease around it, so two commands never both act on one state."""

from __future__ import annotations

import json
import os

from swamp.datastore.base import Datastore
from swamp.errors import ConflictError, NotFoundError, ValidationError
from swamp.util import clock
from swamp.util.actors import local_user
from swamp.util.ids import hostname
from swamp.util.names import did_you_mean
from swamp.workflows import records
from swamp.workflows.records import JobRun, StepRun, WorkflowRun

FINISHED = ("succeeded", "failed", "cancelled", "interrupted")


def pick(ds: Datastore, workflow_id: str, run_id: str | None, statuses: tuple[str, ...]) -> WorkflowRun:
    """The run given by id, or the newest run in one of ``statuses``."""
    if run_id:
        return records.load(ds, workflow_id, run_id)
    for run in records.history(ds, workflow_id):
        if run.status in statuses:
            return run
    raise NotFoundError(f"this workflow has no {' or '.join(statuses)} run",
                        hint="list runs with 'swamp workflow history NAME'")


def claim_for_resume(ds: Datastore, workflow_id: str, run_id: str) -> WorkflowRun:
    run = records.load(ds, workflow_id, run_id)
    if run.status != "suspended":
        raise ConflictError(f"run {run_id} is {run.status}; only a suspended run can be resumed")
    run.status = "running"
    run.host, run.pid = hostname(), os.getpid()
    records.save(ds, run)
    return run


def find_waiting(ds: Datastore, run: WorkflowRun, step: str) -> tuple[WorkflowRun, str, str]:
    """The step waiting for approval named ``step`` (a step name, or
    ``job/step`` where names repeat across jobs), in the run or in a
    suspended nested run it started: (the run that owns it, job, step)."""
    for owner, j, s in waiting_steps(ds, run):
        if step in (s.name, f"{j.name}/{s.name}"):
            return owner, j.name, s.name
    waiting = sorted(f"{j.name}/{s.name}" for _, j, s in waiting_steps(ds, run))
    raise NotFoundError(
        f"run {run.id} has no step {step!r} waiting for approval",
        hint=(did_you_mean(step, waiting + [w.split('/', 1)[1] for w in waiting])
              or (f"waiting: {', '.join(waiting)}" if waiting else "no step of this run is waiting")))


def record_decision(ds: Datastore, owner: WorkflowRun, job_name: str, step_name: str, decision: str,
                    reason: str | None, by: str | None = None) -> StepRun:
    """Record ``approved`` or ``rejected`` on a step still waiting, read
    afresh, as decided by ``by`` (util/actors.py: a server's caller;
    default: this process's user and host)."""
    fresh = records.load(ds, owner.workflowId, owner.id)
    if fresh.status != "suspended":
        raise ConflictError(f"run {owner.id} is {fresh.status}; decisions are taken while it is suspended")
    s = next(s for s in fresh.job(job_name).steps if s.name == step_name)
    if s.status != "waiting_approval" or s.approval is None or s.approval.decision:
        raise ConflictError(f"step {step_name!r} is no longer waiting for approval")
    a = s.approval
    if a.timeoutSeconds and clock.now() > clock.parse_iso(a.requestedAt).timestamp() + a.timeoutSeconds:
        raise ConflictError(f"step {step_name!r} waited for a decision for at most {a.timeoutSeconds} s, "
                            f"from {a.requestedAt}; it is too late to decide",
                            hint="resume the run: the step then fails for want of a decision")
    s.approval.decision = decision
    s.approval.decidedBy = by or local_user()
    s.approval.decidedAt = clock.isoformat()
    s.approval.reason = reason
    records.save(ds, fresh)
    return s


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


def cancel_in_flight(run: WorkflowRun) -> bool:
    """Whether cancelling ``run`` means asking its process to stop (it is
    running somewhere) rather than cancelling the record at once."""
    return run.status in ("running", "pending") and _alive(run)


def request_cancel(ds: Datastore, run: WorkflowRun, by: str | None = None) -> None:
    """Ask the process running ``run`` to stop: a marker it looks for (its
    engine watches for it about once a second, and then stops its steps in
    flight), saying who asks (``by``; default: this process's user), which
    that engine records as the run's ``cancelledBy``."""
    doc = {"by": by or local_user(), "at": clock.isoformat()}
    ds.write_bytes(records.cancel_path(run.workflowId, run.id), (json.dumps(doc, sort_keys=True) + "\n").encode())


def cancel_requester(ds: Datastore, marker: str) -> str | None:
    """Who asked for a cancel, from its marker (None when it cannot be
    read; a marker of an older swamp is "user@host TIME")."""
    try:
        text = ds.read_bytes(marker).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - gone or unreadable: the cancel still stands
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return text.split(" ", 1)[0].strip() or None
    by = doc.get("by") if isinstance(doc, dict) else None
    return by if isinstance(by, str) and by else None


def cancel_now(ds: Datastore, workflow_id: str, run_id: str, by: str | None = None) -> WorkflowRun:
    """Cancel a run that nothing is running, as ``by`` (default: this
    process's user); returns the record as saved."""
    fresh = records.load(ds, workflow_id, run_id)
    if fresh.status in FINISHED:
        raise ConflictError(f"run {run_id} already {fresh.status}")
    fresh.status = "cancelled"
    fresh.cancelledBy = by or local_user()
    fresh.inputs = None
    fresh.completedAt = clock.isoformat()
    for j in fresh.jobs:
        if j.status not in ("succeeded", "failed", "skipped"):
            j.status = "pending"
    records.save(ds, fresh)
    return fresh


def suspended_children(ds: Datastore, run: WorkflowRun) -> list[WorkflowRun]:
    """The suspended nested runs that ``run``'s waiting steps wait on."""
    out = []
    for _, s in run.steps():
        if s.childRunId and s.childWorkflowId and s.status == "waiting_approval":
            child = records.load(ds, s.childWorkflowId, s.childRunId)
            if child.status == "suspended":
                out.append(child)
    return out


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


RESTARTABLE = ("failed", "cancelled", "interrupted")


def reset_from(wf, run: WorkflowRun, step: str) -> list[str]:
    """Make ``run`` (failed or cancelled) continue from ``step`` (a step
    name, or ``job/step``): that step, the steps of its job that depend on
    it (directly or not), and every step of the jobs that depend on its job
    go back to pending; the rest keeps its outcome. Returns the reset steps
    as ``job/step``. A forEach step is expanded again; one of its items,
    named as the record shows it, restarts the whole step."""
    from swamp.workflows.step_names import declared_step

    step = declared_step(run, step)  # a forEach item by the name its record shows: its whole step again
    found = [(j, s) for j in wf.jobs for s in j.steps if step in (s.name, f"{j.name}/{s.name}")]
    if not found:
        names = [f"{j.name}/{s.name}" for j in wf.jobs for s in j.steps]
        raise NotFoundError(f"workflow {wf.name!r} has no step {step!r}",
                            hint=did_you_mean(step, names + [n.split("/", 1)[1] for n in names])
                            or f"steps: {', '.join(names)}")
    if len(found) > 1:
        raise ValidationError(f"step {step!r} is in several jobs: name it as JOB/STEP",
                              hint=", ".join(f"{j.name}/{s.name}" for j, s in found))
    job, start = found[0]
    doomed_steps = {start.name}
    changed = True
    while changed:  # the steps that depend on a reset step, transitively
        changed = False
        for s in job.steps:
            if s.name not in doomed_steps and any(d.step in doomed_steps for d in s.dependsOn):
                doomed_steps.add(s.name)
                changed = True
    doomed_jobs = {job.name}
    changed = True
    while changed:
        changed = False
        for j in wf.jobs:
            if j.name not in doomed_jobs and any(d.job in doomed_jobs for d in j.dependsOn):
                doomed_jobs.add(j.name)
                changed = True
    tasks = {(j.name, s.name): s.task.type for j in wf.jobs for s in j.steps}
    reset: list[str] = []
    for jr in run.jobs:
        whole = jr.name in doomed_jobs and jr.name != job.name
        if jr.name not in doomed_jobs:
            continue
        fresh: list[StepRun] = []
        seen: set[str] = set()
        for s in jr.steps:
            if whole or s.declared in doomed_steps:
                if s.declared not in seen:
                    seen.add(s.declared)
                    fresh.append(StepRun(name=s.declared, task=tasks[(jr.name, s.declared)]))
                    reset.append(f"{jr.name}/{s.declared}")
            else:
                fresh.append(s)
        jr.steps = fresh
        jr.status, jr.skipReason, jr.completedAt = "pending", None, None
    run.status = "suspended"  # what a resume claims
    run.completedAt = None
    run.failedStep = run.failureReason = run.failureStderrTail = None
    run.cancelledBy = None  # it runs again: no longer cancelled
    return reset


def claim_from(ds: Datastore, wf, workflow_id: str, run_id: str, step: str) -> tuple[WorkflowRun, list[str]]:
    """Claim a failed or cancelled run to continue it from ``step`` (under
    the run's lease): reset, marked running, saved."""
    run = records.load(ds, workflow_id, run_id)
    if run.status not in RESTARTABLE:
        raise ConflictError(f"run {run_id} is {run.status}; --from restarts a failed or cancelled run",
                            hint="a suspended run continues with 'swamp workflow resume' alone")
    reset = reset_from(wf, run, step)
    run.status = "running"
    run.host, run.pid = hostname(), os.getpid()
    records.save(ds, run)
    return run, reset
