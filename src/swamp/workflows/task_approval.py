"""The manual_approval task: the first time, the step starts waiting (the
run suspends once nothing else can proceed); on a resume, its recorded
decision (or its timeout) ends it."""

from __future__ import annotations

from typing import Any

from swamp.util import clock
from swamp.workflows.records import Approval, StepRun
from swamp.workflows.run_state import JobState
from swamp.workflows.schema import Step


def approval(ex, st: JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
    state = ex.state
    task = step.task
    a = e.approval
    if a is None:
        prompt = ex.scope.render(task.prompt, f"{where}.task.prompt", item)
        with state.lock:
            e.approval = Approval(prompt=str(prompt), requestedAt=clock.isoformat(),
                                  timeoutSeconds=task.timeout)
            e.startedAt = e.startedAt or e.approval.requestedAt
            e.status = "waiting_approval"
        state.log(f"step {st.record.name}/{e.name}: waiting for approval: {prompt}")
        state.notify(st, e)
        return
    if a.decision == "approved":
        state.set_done(st, e, "succeeded")
    elif a.decision == "rejected":
        state.set_failed(st, e, f"rejected by {a.decidedBy}" + (f": {a.reason}" if a.reason else ""), step)
    elif a.timeoutSeconds and clock.now() > clock.parse_iso(a.requestedAt).timestamp() + a.timeoutSeconds:
        state.set_failed(st, e, f"no decision within {a.timeoutSeconds} s", step)
