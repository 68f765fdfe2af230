"""Which run an approval decision is for, and whether the run can continue.

One behaviour wherever a decision is taken (CLI, API, ``--server``,
dashboard): without ``--run`` the decision goes to the one run waiting at
that step, and is refused when several wait (a guess could approve the
wrong one); once a decision leaves nothing else in the run waiting, the
run continues in whatever process or server can continue it (the caller
of :func:`continuable` decides where)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.app.lifecycle import reading
from swamp.app.workflow_files import run_json
from swamp.errors import ConflictError, NotFoundError
from swamp.workflows import records, runs
from swamp.workflows.files import find_workflow
from swamp.workflows.records import WorkflowRun
from swamp.workflows.schema import workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def waiting_run(ds, workflow_id: str, workflow_name: str, step: str, run_id: str | None,
                verb: str = "approve") -> WorkflowRun:
    """The run a decision on ``step`` is for: run ``run_id``, or the only
    suspended run that waits for a decision at ``step``. Several such runs:
    a ConflictError listing them, whose hint names ``--run``."""
    if run_id:
        return records.load(ds, workflow_id, run_id)
    suspended = [r for r in records.history(ds, workflow_id) if r.status == "suspended" and not r.parentRunId]
    waiting = [r for r in suspended
               if any(step in (s.name, f"{j.name}/{s.name}") for _, j, s in runs.waiting_steps(ds, r))]
    if len(waiting) == 1:
        return waiting[0]
    if not waiting:
        if suspended:
            return suspended[0]  # find_waiting then says what this run waits for
        raise NotFoundError(f"no suspended run of {workflow_name} waits for a decision",
                            hint=f"list the waits with 'swamp workflow approvals {workflow_name}'")
    ids = ", ".join(sorted(r.id for r in waiting))
    raise ConflictError(f"{len(waiting)} runs of {workflow_name} wait for a decision at {step}: {ids}",
                        hint=f"say which: swamp workflow {verb} {workflow_name} {step} --run RUN_ID "
                             f"(swamp workflow approvals {workflow_name} lists them)")


def continuable(repo: Repo, workflow_name: str, run_id: str) -> bool:
    """Whether the run is suspended with nothing left waiting (no approval,
    no signal): the decision just taken was the last it waited for."""
    try:
        with reading(repo):
            doc = run_json(repo, records.load(repo.datastore, workflow_id(find_workflow(repo, workflow_name)[1]),
                                              run_id))
    except NotFoundError:
        return False
    return doc["status"] == "suspended" and not doc.get("approvalRequired") and not doc.get("signalRequired")


def decision_line(result: dict) -> str:
    """The human line for a decision, before the run continues (or not)."""
    where = f"{result['job']}/{result['step']}"
    line = f"{result['decision']} {where} of run {result['runId']}"
    return line + (f" ({result['reason']})" if result.get("reason") else "")
