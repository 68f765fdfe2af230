"""The wait_for_signal task: the first time, the step starts waiting (the
run suspends once nothing else can proceed). Later (a resume), its
write-once outcome record decides: a message, or the timeout, settled on
the spot if it passed with no message (the host settles it create-only,
so a signal racing it gets one answer). ``steps.NAME.signal`` shows each
settled wait's message to later expressions."""

from __future__ import annotations

from typing import Any

from swamp.util import clock
from swamp.workflows import signals
from swamp.workflows.records import SignalWait, StepRun
from swamp.workflows.run_state import JobState
from swamp.workflows.schema import Step


def signal_view(w: SignalWait) -> dict:
    return {"signal": w.message, "outcome": w.outcome, "by": w.by, "at": w.at}


def signal_wait(ex, st: JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
    state = ex.state
    run = state.run
    task = step.task
    w = e.signal
    if w is None:
        prompt = ex.scope.render(task.prompt, f"{where}.task.prompt", item) if task.prompt else None
        with state.lock:
            e.signal = SignalWait(prompt=None if prompt is None else str(prompt),
                                  requestedAt=clock.isoformat(), timeoutSeconds=task.timeout)
            e.startedAt = e.startedAt or e.signal.requestedAt
            e.status = "waiting_signal"
        state.log(f"step {st.record.name}/{e.name}: waiting for a signal"
                  + (f" (at most {task.timeout} s)" if task.timeout else "") + (f": {prompt}" if prompt else ""))
        state.notify(st, e)
        return
    outcome = signals.read_outcome(state.ds, run.workflowId, run.id, st.record.name, e.name, w.requestedAt)
    settle = getattr(ex.engine.host, "settle_signal", None)
    if outcome is None and signals.expired(w) and settle is not None:
        outcome = settle(run, st.record.name, e.name, task.default if task.onTimeout == "continue" else None)
    if outcome is None:
        return  # still waiting
    with state.lock:
        w.outcome, w.message, w.by, w.at = outcome["outcome"], outcome.get("message"), outcome.get("by"), \
            outcome.get("at")
        ex.steps_seen[e.name] = signal_view(w)
    state.log(f"step {st.record.name}/{e.name}: {signals.describe(outcome)}")
    if w.outcome == "signalled" or task.onTimeout == "continue":
        state.set_done(st, e, "succeeded")
    else:
        state.set_failed(st, e, f"no signal within {w.timeoutSeconds} s", step)
