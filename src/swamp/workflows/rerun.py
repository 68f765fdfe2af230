"""Re-running a failed run from its failure (``workflow run --from-failed
RUN_ID``, docs/workflows.md "Re-run from failure"): a new run whose record
starts as the old one's with every step that succeeded kept (its outcome
and its data: later steps read that data as they would have), and every
other step pending, so only the steps that failed or did not run run.

Kept are model_method, workflow and assert steps that succeeded; each
forEach item on its own. An approval or a signal is asked again: a
decision was given for one run, and whoever re-runs it may hold only
``run``. Ephemeral data of the old run is gone with its process."""

from __future__ import annotations

from swamp.errors import ConflictError, ValidationError
from swamp.workflows.records import JobRun, StepRun, WorkflowRun

#: the runs that can be re-run from their failure
RERUNNABLE = ("failed", "cancelled", "interrupted")
#: the steps whose success is kept
KEPT_TASKS = ("model_method", "workflow", "assert")


def check(wf, old: WorkflowRun) -> None:
    """Refuse a run that cannot be re-run, before anything is written."""
    if old.status not in RERUNNABLE:
        raise ConflictError(f"run {old.id} is {old.status}; --from-failed re-runs a failed or cancelled run",
                            hint=("a suspended run continues with 'swamp workflow resume'"
                                  if old.status == "suspended" else "start a new run without --from-failed"))
    if old.parentRunId:
        raise ConflictError(f"run {old.id} is a nested run of run {old.parentRunId}",
                            hint=f"re-run that one: swamp workflow run --from-failed {old.parentRunId}")
    declared = {j.name: {s.name: s.task.type for s in j.steps} for j in wf.jobs}
    recorded = {j.name: {s.declared for s in j.steps} for j in old.jobs}
    if {j: set(s) for j, s in declared.items()} != recorded:
        raise ValidationError(f"workflow {wf.name!r} changed since run {old.id}: its jobs or steps differ",
                              hint="start a new run, or restore the workflow as it was")


def plan(wf, old: WorkflowRun) -> list[JobRun]:
    """The new record's jobs: ``old``'s, the steps kept or reset."""
    tasks = {(j.name, s.name): s.task.type for j in wf.jobs for s in j.steps}
    jobs = []
    for jr in old.jobs:
        steps: list[StepRun] = []
        placeholders: set[str] = set()
        for s in jr.steps:
            task = tasks[(jr.name, s.declared)]
            if s.status == "succeeded" and task in KEPT_TASKS:
                steps.append(s.model_copy(deep=True, update={"reusedFrom": s.reusedFrom or old.id}))
            elif s.forEachOf is not None:  # this item runs again; the others keep their outcome
                steps.append(StepRun(name=s.name, task=task, forEachOf=s.forEachOf, item=s.item))
            elif s.declared not in placeholders:  # a step (or a forEach that never expanded) runs again
                placeholders.add(s.declared)
                steps.append(StepRun(name=s.declared, task=task))
        done = all(s.reusedFrom for s in steps)
        jobs.append(JobRun(name=jr.name, steps=steps, status="succeeded" if done else "pending",
                           startedAt=jr.startedAt if done else None, completedAt=jr.completedAt if done else None))
    return jobs


def kept(run: WorkflowRun) -> list[str]:
    """The steps of a re-run kept from the run it re-runs, as ``job/step``."""
    return [f"{j.name}/{s.name}" for j, s in run.steps() if s.reusedFrom]
