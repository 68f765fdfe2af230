"""The assert task: an expression that must give true. Below the run's
--fail-on threshold a failed assert is a warning: the step fails, the job
and the run do not."""

from __future__ import annotations

from typing import Any

from swamp.errors import ValidationError
from swamp.workflows.records import AssertResult, StepRun
from swamp.workflows.run_state import JobState
from swamp.workflows.schema import Step

SEVERITY_RANK = {"low": 1, "medium": 2, "high": 3}


def assertion(ex, st: JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
    state = ex.state
    task = step.task
    state.set_running(st, e)
    value = ex.scope.condition(task.expr, f"{where}.task.expr", item)
    if not isinstance(value, bool):
        raise ValidationError(f"an assert's expr must give true or false, not {value!r}")
    severity = task.assert_severity
    if value:
        with state.lock:
            e.assertResult = AssertResult(passed=True, severity=severity)
        state.set_done(st, e, "succeeded")
        return
    message = str(ex.scope.render(task.message, f"{where}.task.message", item))
    fails_run = SEVERITY_RANK[severity] >= SEVERITY_RANK[state.run.failOn]
    with state.lock:
        e.assertResult = AssertResult(passed=False, severity=severity, message=message, failsRun=fails_run)
    state.set_failed(st, e, f"assertion failed ({severity}): {message}", step, tolerated=not fails_run)
