"""The workflow task: a nested run of another workflow, started (or, on a
resume, continued where it suspended) as a child of this run. A cycle, or
nesting deeper than MAX_DEPTH, is refused before it starts."""

from __future__ import annotations

from typing import Any

from swamp.errors import SwampError, ValidationError
from swamp.workflows import records
from swamp.workflows.records import StepRun, WorkflowRun
from swamp.workflows.run_state import JobState, Parent
from swamp.workflows.schema import Step, Workflow, workflow_id

MAX_DEPTH = 10


def prepare_workflow(ex, step: Step, e: StepRun, where: str, item: Any) -> tuple:
    from swamp.workflows.files import find_workflow

    task = step.task
    name = ex.scope.render(task.workflowIdOrName, f"{where}.task.workflowIdOrName", item)
    inputs = ex.scope.render(task.inputs, f"{where}.task.inputs", item) or {}
    if not isinstance(name, str):
        raise ValidationError("workflowIdOrName must give a string")
    if not isinstance(inputs, dict):
        raise ValidationError(f"task inputs must give a map, not {type(inputs).__name__}")
    path, child = find_workflow(ex.engine.repo, name)
    cid = workflow_id(child)
    if cid in (i for i, _ in ex.stack):
        names = [n for _, n in ex.stack] + [child.name]
        raise ValidationError(f"workflow cycle: {' -> '.join(names)}",
                              hint="a workflow cannot run itself, directly or through others")
    if len(ex.stack) > MAX_DEPTH:  # the child's depth would be len(ex.stack)
        raise ValidationError(f"workflows nest deeper than {MAX_DEPTH} levels")
    with ex.state.lock:
        e.childWorkflow, e.childWorkflowId = child.name, cid
    return path, child, inputs


def run_workflow(ex, st: JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
    path, child, inputs = prepare_workflow(ex, step, e, where, item)
    state, engine = ex.state, ex.engine
    from swamp.workflows.files import shown_path

    source = shown_path(engine.repo, path)  # an extension's workflow is outside the repository
    state.set_running(st, e)
    try:
        if e.childRunId:
            result = _resume_child(ex, child, source, e.childRunId)
        else:
            result = engine.start(child, source, inputs, fail_on=state.run.failOn,
                                  parent=Parent(state.run, ex.stack, ex.stopping.should_stop))
    except SwampError as err:
        state.set_failed(st, e, err.message, step)
        return
    with state.lock:
        e.childRunId = result.id
    if result.status == "succeeded":
        state.set_done(st, e, "succeeded")
    elif result.status == "suspended":
        state.set_done(st, e, "waiting_approval")
    else:
        state.set_failed(st, e, f"nested run {result.id} of {child.name} {result.status}"
                         + (f": {result.failureReason}" if result.failureReason else ""), step,
                         stderr_tail=result.failureStderrTail)


def _resume_child(ex, child: Workflow, source: str, run_id: str) -> WorkflowRun:
    engine = ex.engine
    run = records.load(engine.ds, workflow_id(child), run_id)
    if run.status != "suspended":
        return run  # finished (resumed on its own, or cancelled)
    inputs = engine.resumable(child, run)
    run = engine.host.claim(workflow_id(child), run_id)
    return engine.resume(child, source, run, inputs, stack=ex.stack + ((run.workflowId, child.name),),
                         outer_stop=ex.stopping.should_stop)
