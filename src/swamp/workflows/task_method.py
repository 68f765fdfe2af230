"""The model_method task: the step's attempts (workflows/retries.py), each
one session of the host's (the model's lease, a pull, the method's
arguments resolved once, the method, the run record in the same commit,
one push), or sent to a worker when the step is placed (task_placed.py).
Also ``model.method(NAME, METHOD)`` probes in guards and asserts."""

from __future__ import annotations

import contextlib
import json
import traceback
from typing import Any

from swamp.errors import SwampError
from swamp.workflows import task_placed
from swamp.workflows.records import StepRun
from swamp.workflows.retries import policy_for
from swamp.workflows.run_state import Attempt, JobState
from swamp.workflows.schema import Step
from swamp.workflows.step_model import data_overrides, prepare_method, with_close_match


def run_method(ex, st: JobState, step: Step, e: StepRun, where: str, item: Any, definition) -> None:
    """The step's attempts: one, as it always was, or up to ``retries``
    more after a failed one, each in a session of its own, with a pause
    before each that a cancel cuts short."""
    state = ex.state
    policy = policy_for(ex.wf, step)
    if policy.plain:
        attempt_method(ex, st, step, e, where, item, definition, policy)
        return
    for number in range(1, policy.attempts + 1):
        with state.lock:
            state.attempts[id(e)] = Attempt(number, policy.attempts)
            if policy.attempts > 1:
                e.attempt, e.maxAttempts = number, policy.attempts
        try:
            attempt_method(ex, st, step, e, where, item, definition, policy)
        finally:
            with state.lock:
                again = state.attempts.pop(id(e)).again
        if not again:
            return
        delay = policy.delay_after(number)
        state.log(f"step {st.record.name}/{e.name}: attempt {number}/{policy.attempts} failed: "
                  f"{e.attempts[-1].error}; attempt {number + 1} in {delay:g} s")
        if ex.stopping.pause(delay):  # the run stops: the step ends with its last attempt's error
            state.set_failed(st, e, e.attempts[-1].error or "failed", step, stderr_tail=e.attempts[-1].stderrTail)
            return


@contextlib.contextmanager
def _step_session(ex, definition, command: str):
    """The host's session of a step. Opening it may wait for a lease (a
    one-lane run takes its model's lease first, app/one_lane_runs.py): the
    run's cancel is watched for meanwhile, and ends that wait at once."""
    with contextlib.ExitStack() as session:
        with ex.stopping.watching() as stopped:
            session.enter_context(ex.engine.host.step(definition, command, cancelled=stopped))
        yield


def attempt_method(ex, st: JobState, step: Step, e: StepRun, where: str, item: Any, definition,
                   policy) -> None:
    """One session: the task's method and inputs, and the method's
    arguments, are resolved once after its pull; the run record goes
    out in the same commit as what the method wrote."""
    state, engine = ex.state, ex.engine
    command = f"workflow run {state.run.workflowName}: {st.record.name}/{e.name}"
    if task_placed.is_placed(ex, step):  # on a worker, through the host
        task_placed.run_placed(ex, st, step, e, where, item, definition, command)
        return
    try:
        with _step_session(ex, definition, command):
            if definition.id in ex.autos:  # a type run directly: its definition is kept
                from swamp.models import auto_definitions

                with engine.host.publishing(definition, command):  # under the model's lease
                    auto_definitions.save(engine.ds, definition)
            try:
                prepared = prepare_method(ex, step, e, where, item, definition)
            except SwampError as err:
                state.set_failed(st, e, with_close_match(err), step, save=False)
                state.write_record()
                return
            try:
                overrides = data_overrides(ex, step, prepared)
            except SwampError as err:
                state.set_failed(st, e, err.message, step, save=False)
                state.write_record()
                return
            state.set_running(st, e)
            with ex.stopping.cancellable(policy.timeout) as control:
                rec = engine.runner.execute(
                    prepared, triggered_by="workflow", initiated_by=state.acting_for(),
                    workflow_run_id=state.run.id,
                    workflow_name=state.run.workflowName, step_name=e.name, overrides=overrides,
                    ephemeral=ex.ephemeral, control=control, discard_failed=not state.final_attempt(e))
            with state.lock:
                e.outputId = rec.id
                e.dataArtifacts = list(rec.dataArtifacts)
            ex.scope.data_changed()  # its writes, ephemeral ones included
            state.method_ended(st, step, e, rec.status, rec.error, save=False, stderr_tail=rec.stderrTail)
            state.write_record()
    except SwampError as err:  # the session's own failure: a lease wait, a push
        if err.code == "cancelled":  # the run stopped while the session waited for its lease
            state.log(f"step {st.record.name}/{e.name}: {err.message}")
        state.set_failed(st, e, "cancelled" if err.code == "cancelled" else err.message, step)
    except Exception as err:  # a bug, recorded where the user will look
        state.log("".join(traceback.format_exception(err)).rstrip())
        state.set_failed(st, e, f"internal error: {type(err).__name__}: {err}", step)


def probe(ex, model: str, method: str, inputs: dict) -> Any:
    """``model.method(NAME, METHOD)`` in a guard or an assert: run the
    method now, in a session of its own, and give the content of the
    first resource it wrote (or its status and error when it wrote
    none)."""
    from swamp.models.definitions import find_definition

    state, engine = ex.state, ex.engine
    definition = find_definition(engine.repo, model)[1]
    with _step_session(ex, definition, f"workflow run {state.run.workflowName}: probe {model}.{method}"):
        prepared = engine.runner.prepare(definition, method, inputs, variables={"run": ex.run_info})
        rec = engine.runner.execute(prepared, triggered_by="workflow", initiated_by=state.acting_for(),
                                    workflow_run_id=state.run.id,
                                    workflow_name=state.run.workflowName, ephemeral=ex.ephemeral)
        state.log(f"probe {model}.{method}: {rec.status} (output {rec.id})")
        first = next((a for a in rec.dataArtifacts if a["kind"] == "resource"), None)
        content = None
        if first is not None:
            from swamp.data.repository import DataRepository

            data = DataRepository(engine.ds)
            raw = data.content(data.get(definition.type, definition.id, first["name"], first["version"]))
            content = json.loads(raw)
    ex.scope.data_changed()
    if content is None:
        return {"status": rec.status, "error": rec.error}
    return content
