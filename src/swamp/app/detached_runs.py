"""Runs started without waiting for their end: checked first (so a wrong
name or input is an error at once, not a run that never starts), then
started elsewhere (a server's thread, or a background process), and
answered with their id as soon as their record exists, which is what
``history get ID`` and the API's Location read."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from swamp.app.workflow_files import checked, fail_on_level
from swamp.errors import SwampError, ValidationError
from swamp.util.problems import joined
from swamp.workflows import dag, records
from swamp.workflows.engine import validate_workflow_inputs
from swamp.workflows.records import WorkflowRun
from swamp.workflows.schema import workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: how long a starter waits for the run's first record before answering anyway
RECORD_WAIT_S = 30.0
POLL_S = 0.05


def check_startable(repo: Repo, name: str, inputs: dict, fail_on: str | None = None) -> str:
    """Refuse what the run would refuse before writing anything (an unknown
    workflow, a workflow that does not validate, inputs that break its
    schema, a wrong failOn, placed steps and no scheduler); returns the
    workflow's id."""
    fail_on_level(fail_on)
    source, wf = checked(repo, name)
    problems = dag.check_structure(wf)
    if problems:
        raise ValidationError(f"{source}: " + joined(problems))
    validate_workflow_inputs(wf, inputs)
    from swamp.app.placed_steps import attached
    from swamp.workflows.task_placed import refuse_undispatchable

    refuse_undispatchable(wf, attached(repo))  # placed steps with nowhere to go: refused now, not in the background
    return workflow_id(wf)


def wait_for_record(repo: Repo, wid: str, run_id: str, going: Callable[[], bool],
                    limit_s: float = RECORD_WAIT_S) -> WorkflowRun | None:
    """The run's record once it exists, or None when the starter stopped
    (``going`` false) or ``limit_s`` passed first. Reads this checkout:
    the run writes its record here before it publishes it."""
    end = time.monotonic() + limit_s
    while True:
        try:
            return records.load(repo.datastore, wid, run_id)
        except SwampError:  # not there yet (or half written)
            pass
        if not going() or time.monotonic() > end:
            return None
        time.sleep(POLL_S)


def started_doc(name: str, run_id: str, run: WorkflowRun | None) -> dict:
    return {"runId": run_id, "workflowName": name, "status": run.status if run else "starting",
            "follow": f"swamp workflow history get {run_id} --follow"}
