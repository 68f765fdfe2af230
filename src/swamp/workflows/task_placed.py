"""A model_method step placed on a worker: the engine builds its StepJob
from the run's own state, hands it to the host (``RunHost.dispatch``), and
records the outcome itself. The host only carries values (workflows/
placement.py); the run record, kept under the run's lease here, says which
worker ran the step."""

from __future__ import annotations

import threading
import time

from swamp.errors import NoDispatcherError, SwampError
from swamp.util import tracing
from swamp.workflows.placement import (Placement, StepJob, placement_of, refuse_sentinels,
                                       secrets_for)
from swamp.workflows.retries import policy_for, timed_out
from swamp.workflows.step_model import data_overrides, prepare_method


def is_placed(ex, step) -> bool:
    """Whether the step goes to a worker (it has a placement, or the run is --remote-only)."""
    return getattr(step, "placement", None) is not None or ex.engine.host.remote_only


def placement_for(ex, step, where: str, item) -> Placement:
    """The step's rendered placement; raises when it cannot be dispatched."""
    placement = placement_of(step, ex.scope.render, where, item)
    if placement is None:
        raise SwampError("the step has no placement, and this run is --remote-only")
    if not ex.engine.host.can_dispatch():
        raise NoDispatcherError(f"the step is placed ({placement.describe()}) but no scheduler is "
                                "configured: pass --scheduler tls://HOST:8786")
    return placement


def build_job(ex, step, e, where: str, item, definition, command: str) -> StepJob:
    """The job as sent: the method and inputs rendered here (a bad one fails
    before anything is sent), the vault values its arguments reference,
    and the run's ephemeral data of its model."""
    prepared = prepare_method(ex, step, e, where, item, definition)
    overrides = data_overrides(ex, step, prepared)
    inputs = ex.scope.render(step.task.inputs, f"{where}.task.inputs", item) or {}
    refuse_sentinels(inputs)
    with ex.state.lock:
        ephemeral = {k: v for k, v in ex.ephemeral.items() if k[0] == definition.id}
    return StepJob(definition=definition, method=prepared.method, inputs=inputs, command=command,
                   variables={"run": ex.run_info}, secrets=secrets_for(ex.engine.repo, prepared),
                   overrides=overrides, auto=definition.id in ex.autos,
                   workflow_run_id=ex.state.run.id, workflow_name=ex.state.run.workflowName,
                   initiated_by=ex.state.acting_for(), step_name=e.name,
                   traceparent=tracing.child_env().get("TRACEPARENT"), ephemeral=ephemeral,
                   discard_failed=not ex.state.final_attempt(e))


def run_placed(ex, st, step, e, where: str, item, definition, command: str) -> None:
    """Run the step on a worker and record what it reports."""
    state = ex.state
    try:
        placement = placement_for(ex, step, where, item)
        job = build_job(ex, step, e, where, item, definition, command)
    except SwampError as err:
        state.set_failed(st, e, err.message, step)
        return
    state.set_running(st, e)
    label = f"{st.record.name}/{e.name}"
    state.log(f"step {label}: dispatched ({placement.describe()})")
    timeout = policy_for(ex.wf, step).timeout
    live = _Live(ex, st, e, timeout)
    try:
        outcome = ex.engine.host.dispatch(job, placement, cancelled=live.cancelled, on_log=live.line,
                                          on_wait=live.waiting)
    except SwampError as err:  # StepCancelledError, WorkerLostError, NoWorkerError, ...
        if live.timed_out:  # stopped on its worker for running out of time: an attempt that failed
            state.method_ended(st, step, e, "failed", timed_out(timeout))
        else:
            state.set_failed(st, e, err.message, step)
        return
    except BaseException:  # Ctrl-C: the dispatcher cancelled the step on its worker
        state.set_failed(st, e, "cancelled: the run was interrupted; the step was stopped on its worker "
                             "and nothing it wrote was published", step, save=False)
        raise
    finally:
        job.secrets.clear()  # the values live no longer than the step
    with state.lock:
        e.worker = outcome.worker
        e.outputId = outcome.output_id
        e.dataArtifacts = list(outcome.data_artifacts)
        if outcome.ephemeral is not None:  # what the step left in its model's ephemeral data
            for key in [k for k in ex.ephemeral if k[0] == definition.id and k not in outcome.ephemeral]:
                ex.ephemeral.pop(key)
            ex.ephemeral.update(outcome.ephemeral)
    state.log(f"step {label}: ran on worker {outcome.worker}")
    state.method_ended(st, step, e, outcome.status, outcome.error, save=False, stderr_tail=outcome.stderr_tail)
    # Bring in what the worker pushed before later steps evaluate anything;
    # the record follows at the run's usual pace (and always at its end).
    ex.engine.host.watch()
    ex.scope.data_changed()
    state.flush()


class _Live:
    """While a placed step runs: its log lines go to the run's log (saved
    at most every LOG_SAVE_INTERVAL seconds while lines come, so ``workflow
    logs`` on any peer sees them) and to the observer's ``step_log(run,
    job, step, line)`` when it has one (the CLI's activity line, serve's
    run stream); a cancel of the run reaches the dispatcher."""

    #: seconds between saves of the run's log while a placed step streams lines
    LOG_SAVE_INTERVAL = 2.0
    #: lines of one step kept in the run's log (the worker streams at most its own cap)
    MAX_LINES = 2000

    def __init__(self, ex, st, e, timeout: float | None = None) -> None:
        self._time = time.monotonic
        self.ex, self.st, self.e = ex, st, e
        #: the step's timeout (workflows/retries.py): past it, the dispatcher is told to cancel it
        self._deadline = None if timeout is None else self._time() + timeout
        self.timed_out = False
        self._mutex = threading.Lock()
        self._lines = 0
        self._unsaved = False
        self._saved = self._time()

    def line(self, line: str) -> None:
        """Called on the dispatcher's thread: cheap, never raises."""
        try:
            with self._mutex:
                self._lines += 1
                if self._lines > self.MAX_LINES:
                    return
                self._unsaved = True
            from swamp.vault.redact import redact_text

            line = redact_text(line)  # the worker masked it; this process may know more secrets (its own env's)
            state = self.ex.state
            state.log(f"step {self.st.record.name}/{self.e.name}: | {line}")
            hook = getattr(state.observer, "step_log", None)
            if hook is not None:
                hook(state.run, self.st.record, self.e, line)
        except Exception:  # noqa: BLE001 - a line that cannot be shown never fails the step
            pass

    def waiting(self, line: str) -> None:
        """A line of progress while no fitting worker is connected: in the
        run's log and to the observer's ``step_waiting(run, job, step,
        line)`` (the CLI prints it); never raises."""
        try:
            state = self.ex.state
            state.log(f"step {self.st.record.name}/{self.e.name}: {line}")
            hook = getattr(state.observer, "step_waiting", None)
            if hook is not None:
                hook(state.run, self.st.record, self.e, line)
        except Exception:  # noqa: BLE001 - progress that cannot be shown never fails the step
            pass

    def cancelled(self) -> bool:
        """Polled by the dispatcher while the step runs (its thread)."""
        ex = self.ex
        with self._mutex:
            save = self._unsaved and self._time() - self._saved >= self.LOG_SAVE_INTERVAL
            if save:
                self._unsaved, self._saved = False, self._time()
        if self._deadline is not None and self._time() >= self._deadline:
            self.timed_out = True
            return True
        try:
            if save:
                ex.state.flush(force=True)
            return ex.state.stop.is_set() or ex.stopping.should_stop()
        except Exception:  # noqa: BLE001 - a failed save or pull is retried at the next look
            return ex.state.stop.is_set()


def undispatchable(wf, host, run=None) -> list[str]:
    """The steps of ``wf`` that would go to workers (placed, or every
    model_method step of a --remote-only run) while the host has no way to
    send them; of a resumed ``run``, only those still to run. Checked before
    any step runs, so such a run is refused instead of failing half-way."""
    if host.can_dispatch():
        return []
    from swamp.workflows import conditions

    to_run = None
    if run is not None:
        to_run = {(jr.name, s.declared) for jr, s in run.steps() if s.status not in conditions.TERMINAL}
    out = []
    for job in wf.jobs:
        for step in job.steps:
            if step.task.type != "model_method" or not (step.placement is not None or host.remote_only):
                continue
            if to_run is None or (job.name, step.name) in to_run:
                out.append(f"{job.name}/{step.name}")
    return out


def refuse_undispatchable(wf, host, run=None) -> None:
    names = undispatchable(wf, host, run)
    if not names:
        return
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise NoDispatcherError(f"workflow {wf.name!r} runs {len(names)} step(s) on workers ({shown}) but no "
                            "scheduler is configured; nothing ran",
                            hint="run it with --scheduler tls://HOST:8786 (or $SWAMP_SCHEDULER), or on a server "
                                 "started with 'swamp serve --scheduler ...' (docs/workers.md)")
