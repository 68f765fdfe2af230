"""A run's state and its transitions: the run record (the one state; every
decision is written into it), its log, the attempts in flight, and the
saves. Every change to a step's entry goes through a transition here,
under the run's lock, so the observer and the log see each one.

The record is saved at most every FLUSH_INTERVAL seconds while the run
goes, always with each model_method step, and when the run suspends or
ends (``flush``, in a session of the host's; ``write_record`` inside a
session the caller holds)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from swamp.util import clock
from swamp.workflows import records
from swamp.workflows.records import JobRun, StepAttempt, StepRun, WorkflowRun
from swamp.workflows.schema import Job, Step

FLUSH_INTERVAL = 0.5


@dataclass
class Parent:
    """Where a nested run was started from."""

    run: WorkflowRun
    stack: tuple[tuple[str, str], ...]  # (id, name) of each workflow from the outermost run down
    #: whether the parent run stops (its should_stop): then the nested run stops its steps too
    should_stop: Callable[[], bool] | None = None


@dataclass
class Attempt:
    """The attempt in flight of a step with a retry policy."""

    number: int
    of: int
    started: float | None = None
    startedAt: str | None = None
    #: it failed and another attempt follows
    again: bool = False
    recorded: bool = False


@dataclass
class JobState:
    job: Job
    index: int
    record: JobRun
    steps: dict[str, tuple[int, Step]] = field(default_factory=dict)


class RunState:
    """The record of one run as it executes, shared by the threads of its
    steps (``lock``), and how it is saved (``host.save``)."""

    def __init__(self, run: WorkflowRun, host, ds, observer, *, log: str) -> None:
        self.run = run
        self.host = host
        self.ds = ds
        self.observer = observer
        self.lock = threading.RLock()
        self.flush_lock = threading.Lock()
        #: set when the run stops (a cancel, an interrupt): steps in flight are stopped
        self.stop = threading.Event()
        self.cancel_requested = False
        self._last_flush = 0.0
        self._flush_interval = FLUSH_INTERVAL
        self._log: list[str] = [log] if log else []
        self._t0 = time.perf_counter()
        self._started: dict[int, float] = {}
        #: the attempt in flight of each step that has a retry policy (workflows/retries.py), by id(StepRun)
        self.attempts: dict[int, Attempt] = {}

    def acting_for(self) -> str | None:
        """Who this run's steps act for: whoever continued it last, else
        whoever started it (their method runs' ``initiatedBy``)."""
        return self.run.resumedBy or self.run.initiatedBy

    # ---------------------------------------------------- step transitions
    def set_running(self, st: JobState, e: StepRun) -> None:
        with self.lock:
            e.status = "running"
            e.error = e.stderrTail = None
            a = self.attempts.get(id(e))
            if a is not None:
                a.started, a.startedAt = time.perf_counter(), clock.isoformat()
            if a is None or a.number == 1 or id(e) not in self._started:  # a step's time spans its attempts
                e.startedAt = clock.isoformat()
                self._started[id(e)] = time.perf_counter()
        self.notify(st, e)

    def final_attempt(self, e: StepRun) -> bool:
        """Whether a failure of ``e`` now ends it (no retry follows)."""
        with self.lock:
            a = self.attempts.get(id(e))
        return a is None or a.number >= a.of or self.stop.is_set()

    def method_ended(self, st: JobState, step: Step, e: StepRun, status: str, error: str | None,
                     *, save: bool = True, stderr_tail: str | None = None) -> None:
        """A method ran (here or on a worker): the step succeeded, or failed,
        or this attempt failed and another follows (the step stays running).
        ``stderr_tail``: its output record's ``stderrTail`` (a failed command)."""
        if status == "succeeded":
            self.set_done(st, e, "succeeded", save=save)
        elif not self.final_attempt(e):
            with self.lock:
                a = self.attempts[id(e)]
                a.again = True
                self._record_attempt(e, "failed", error or status, stderr_tail)
                e.outputId, e.dataArtifacts = None, []
            self.notify(st, e)
            if save:
                self.flush()
        else:
            self.set_failed(st, e, error or status, step, save=save, stderr_tail=stderr_tail)

    def _record_attempt(self, e: StepRun, status: str, error: str | None, stderr_tail: str | None = None) -> None:
        """Under the lock: the outcome of the attempt in flight, when the
        step may be tried more than once."""
        a = self.attempts.get(id(e))
        if a is None or a.of == 1 or a.recorded:
            return
        a.recorded = True
        ms = int((time.perf_counter() - a.started) * 1000) if a.started is not None else None
        e.attempts.append(StepAttempt(number=a.number, status=status, startedAt=a.startedAt,
                                      completedAt=clock.isoformat(), durationMs=ms, error=error,
                                      stderrTail=stderr_tail, outputId=e.outputId))

    def _end(self, e: StepRun) -> None:
        e.completedAt = clock.isoformat()
        self._record_attempt(e, "succeeded" if e.status == "succeeded" else "failed", e.error, e.stderrTail)
        t0 = self._started.pop(id(e), None)
        if t0 is not None:
            e.durationMs = int((time.perf_counter() - t0) * 1000)

    def set_done(self, st: JobState, e: StepRun, status: str, *, save: bool = True) -> None:
        with self.lock:
            e.status = status
            if status == "succeeded":
                self._end(e)
        self.log(f"step {st.record.name}/{e.name}: {status}"
                 + (f" (output {e.outputId})" if e.outputId else "")
                 + (f" ({e.attempt_note})" if e.attempt_note else ""))
        self.notify(st, e)
        if save:
            self.flush()

    def set_failed(self, st: JobState, e: StepRun, message: str, step: Step, *, tolerated: bool = False,
                   save: bool = True, stderr_tail: str | None = None) -> None:
        with self.lock:
            e.status = "failed"
            e.error, e.stderrTail = message, stderr_tail
            if step.allowFailure or tolerated:
                e.allowedFailure = True
            self._end(e)
        self.log(f"step {st.record.name}/{e.name}: failed"
                 + (" (allowed)" if e.allowedFailure else "")
                 + (f" ({e.attempt_note})" if e.attempt_note else "") + f": {message}")
        if stderr_tail:  # the run's log says why too (written redacted)
            self.log(f"step {st.record.name}/{e.name}: stderr: {stderr_tail}")
        self.notify(st, e)
        if save:
            self.flush()

    def set_skipped(self, st: JobState, e: StepRun, reason: str, detail: str) -> None:
        with self.lock:
            e.status, e.skipReason, e.detail = "skipped", reason, detail
        self.log(f"step {st.record.name}/{e.name}: skipped ({reason}: {detail})")
        self.notify(st, e)

    def notify(self, st: JobState, e: StepRun) -> None:
        if self.observer is not None:
            self.observer(self.run, st.record, e)

    # ------------------------------------------------------- the run's end
    def finish(self, inputs: dict, interrupted: bool) -> None:
        """The run's own status from its jobs', its time, and the last save."""
        with self.lock:
            run = self.run
            for jr in run.jobs:
                if jr.status == "running":
                    jr.status = job_status(jr)
            failed = [(jr, s) for jr, s in run.steps() if s.status == "failed" and not s.allowedFailure]
            waiting = any(jr.status in ("pending", "waiting_approval", "waiting_signal") for jr in run.jobs)
            if self.cancel_requested or interrupted:
                run.status = "cancelled"
            elif waiting:
                run.status = "suspended"
            elif failed:
                run.status = "failed"
            else:
                run.status = "succeeded"
            if failed:
                jr, s = failed[0]
                run.failedStep = f"{jr.name}/{s.name}"
                run.failureReason, run.failureStderrTail = s.error, s.stderrTail
            else:
                run.failedStep = run.failureReason = run.failureStderrTail = None
            # Inputs are kept while the run can continue: suspended, or
            # failed (resume --from STEP restarts it with them).
            run.inputs = dict(inputs) if run.status in ("suspended", "failed") else None
            run.completedAt = None if run.status == "suspended" else clock.isoformat()
            run.durationMs = (run.durationMs or 0) + int((time.perf_counter() - self._t0) * 1000)
        self.log(f"run {run.id}: {run.status}" + (f" ({run.failedStep}: {run.failureReason})"
                                                  if run.status == "failed" else ""))
        marker = records.cancel_path(run.workflowId, run.id)
        if self.ds.exists(marker):
            self.ds.delete(marker)  # answered: it must not cancel a later resume
        self.flush(force=True)  # (its session publishes the delete too)

    # -------------------------------------------------------------- saving
    def log(self, line: str) -> None:
        with self.lock:
            self._log.append(f"{clock.isoformat()} {line}\n")

    def flush(self, *, force: bool = False) -> None:
        """Save the record and the log in a session of their own, at most
        every FLUSH_INTERVAL seconds unless forced."""
        now = time.monotonic()
        if not force and now - self._last_flush < self._flush_interval:
            return
        self.host.save(self.write_record, f"workflow run {self.run.workflowName}")
        # A large record costs more to save: keep that under a tenth of the
        # run's time.
        self._flush_interval = max(FLUSH_INTERVAL, 10 * (time.monotonic() - now))

    def write_record(self) -> None:
        """Write the record and the log into the datastore, inside the
        session the caller holds."""
        with self.flush_lock:
            with self.lock:
                self._last_flush = time.monotonic()
                data = records.dump(self.run)
                log = "".join(self._log)
            records.write(self.ds, self.run.workflowId, self.run.id, data, log)


def job_status(jr: JobRun) -> str:
    statuses = [s.status for s in jr.steps]
    if "waiting_approval" in statuses:
        return "waiting_approval"
    if "waiting_signal" in statuses:
        return "waiting_signal"
    if any(s in ("pending", "running") for s in statuses):
        return "pending"
    if any(s.status == "failed" and not s.allowedFailure for s in jr.steps):
        return "failed"
    return "succeeded"
