"""Running a workflow: jobs level by level, the steps of each job level by
level, each level's units concurrently within their caps (scheduler.py).

Per step, in order: its dependency conditions (unmet: skipped, reason
``dependency`` or ``condition``), forEach expansion, its guard (truthy:
skipped, ``guarded``), its task. A step waiting for approval suspends the
run once nothing else can proceed; ``resume`` continues from the saved
record and never reruns a finished step.

The run record is the one state: every decision is written into it, and it
is saved at most every FLUSH_INTERVAL seconds while the run goes, always
with each model_method step, and when the run suspends or ends.

The engine opens no datastore session itself: the application layer hands
it a ``RunHost`` that holds the run's lease while it executes, runs each
model_method step as one session (the model's lease, a pull, the step's
arguments resolved once, the method, the run record updated, one push,
release), saves the record in a session of its own otherwise, and brings
peers' changes in when the engine watches for a cancel request."""

from __future__ import annotations

import contextlib
import os
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Protocol

from swamp.errors import SwampError, ValidationError
from swamp.util import clock, tracing
from swamp.workflows import conditions, dag, records
from swamp.workflows.expressions import UNSET, Scope, truthy
from swamp.workflows.records import Approval, AssertResult, JobRun, SignalWait, StepAttempt, StepRun, WorkflowRun
from swamp.workflows.scheduler import Gate, Unit, run_parallel, run_units
from swamp.workflows.schema import Job, Step, Workflow, workflow_id

MAX_DEPTH = 10
DEFAULT_MAX_CONCURRENT_STEPS = 4
FLUSH_INTERVAL = 0.5
CANCEL_CHECK_INTERVAL = 1.0  # a cancel from any peer is seen within about this long
SEVERITY_RANK = {"low": 1, "medium": 2, "high": 3}


def max_concurrent_steps() -> int:
    raw = os.environ.get("SWAMP_MAX_CONCURRENT_STEPS")
    if not raw:
        return DEFAULT_MAX_CONCURRENT_STEPS
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"SWAMP_MAX_CONCURRENT_STEPS={raw!r} is not a number") from None
    if value < 1:
        raise ValidationError("SWAMP_MAX_CONCURRENT_STEPS must be at least 1")
    return value


@dataclass
class Parent:
    """Where a nested run was started from."""

    run: WorkflowRun
    stack: tuple[tuple[str, str], ...]  # (id, name) of each workflow from the outermost run down
    #: whether the parent run stops (its should_stop): then the nested run stops its steps too
    should_stop: Callable[[], bool] | None = None


Observer = Callable[[WorkflowRun, JobRun, StepRun], None]


class RunHost(Protocol):
    """What the engine needs from the application layer, which owns the
    datastore sessions and the lease names."""

    def holding(self, run: WorkflowRun) -> ContextManager:
        """The run's lease, held while the run executes."""

    def step(self, definition, command: str) -> ContextManager:
        """One session for one model_method step of ``definition``."""

    def save(self, write: Callable[[], None], command: str) -> None:
        """Call ``write`` (it writes the run record) in a session of its own."""

    def watch(self) -> None:
        """Bring peers' changes in (a cancel request may be among them)."""

    def claim(self, workflow_id: str, run_id: str) -> WorkflowRun:
        """Claim a suspended (nested) run to resume it."""


class Engine:
    """Runs the workflows of one repository. One Runner (and so one type
    registry) serves every step of every run, nested ones included."""

    def __init__(self, repo, host: RunHost, *, observer: Observer | None = None) -> None:
        from swamp.models.runner import Runner

        self.repo = repo
        self.ds = repo.datastore
        self.host = host
        self.runner = Runner(repo)
        self.observer = observer
        self.max_concurrent = max_concurrent_steps()
        self._registry_ready = False

    def _prime(self) -> None:
        # The registry loads lazily and is not safe to load from two threads.
        if not self._registry_ready:
            self.runner.registry.all()
            self._registry_ready = True

    # ---------------------------------------------------------------- start
    def start(self, wf: Workflow, source: str, inputs: dict, *, fail_on: str = "low",
              parent: Parent | None = None, by: str | None = None,
              rerun_of: WorkflowRun | None = None, run_id: str | None = None) -> WorkflowRun:
        """Check the workflow's structure and inputs (raising before anything
        is written), then run it to its end or its suspension, as started by
        ``by`` (util/actors.py; a nested run: whoever its parent acts for;
        by default this process's user). ``rerun_of``: a failed run of
        ``wf`` whose succeeded steps the new run keeps (workflows/rerun.py)."""
        from swamp.workflows import rerun

        problems = dag.check_structure(wf)
        if problems:
            raise ValidationError(f"{source}: " + "; ".join(problems))
        if rerun_of is not None:
            rerun.check(wf, rerun_of)
        values = validate_workflow_inputs(wf, inputs)
        from swamp.util.actors import local_user
        from swamp.util.ids import hostname, new_id

        wid = workflow_id(wf)
        run = WorkflowRun(
            id=run_id or new_id(), workflowId=wid, workflowName=wf.name, workflowVersion=wf.version,
            startedAt=clock.isoformat(), inputKeys=sorted(values), failOn=fail_on, tags=dict(wf.tags),
            parentRunId=parent.run.id if parent else None,
            parentWorkflowId=parent.run.workflowId if parent else None,
            depth=len(parent.stack) if parent else 0,
            initiatedBy=by or ((parent.run.resumedBy or parent.run.initiatedBy) if parent else None) or local_user(),
            host=hostname(), pid=os.getpid(),
        )
        run.logFile = records.log_path(wid, run.id)
        run.jobs = plan(wf) if rerun_of is None else rerun.plan(wf, rerun_of)
        log = ""
        if rerun_of is not None:
            run.rerunOf = rerun_of.id
            kept = rerun.kept(run)
            log = (f"{clock.isoformat()} re-runs run {rerun_of.id} from its failure; kept: "
                   f"{', '.join(kept) or 'nothing'}\n")
        stack = (parent.stack if parent else ()) + ((wid, wf.name),)
        return _Execution(self, wf, source, run, values, stack, log=log,
                          outer_stop=parent.should_stop if parent else None).go()

    @staticmethod
    def resumable(wf: Workflow, run: WorkflowRun, extra_inputs: dict | None = None) -> dict:
        """The inputs a suspended run would continue with; raises when it
        cannot continue. Called before the run is claimed, so a refusal
        leaves it suspended."""
        _check_record_matches(wf, run)
        return validate_workflow_inputs(wf, {**(run.inputs or {}), **(extra_inputs or {})})

    def resume(self, wf: Workflow, source: str, run: WorkflowRun, inputs: dict,
               *, stack: tuple[tuple[str, str], ...] | None = None,
               outer_stop: Callable[[], bool] | None = None, by: str | None = None) -> WorkflowRun:
        """Continue a claimed run with ``inputs`` (from ``resumable``), as
        continued by ``by`` (recorded ``resumedBy`` when it is not who
        started the run; its steps then run for ``by``)."""
        run.inputKeys = sorted(inputs)
        if by:  # who continues it now: no one else, when it is who started it
            run.resumedBy = by if by != run.initiatedBy else None
        log = records.read_log(self.ds, run.workflowId, run.id)
        return _Execution(self, wf, source, run, inputs, stack or ((run.workflowId, wf.name),), log=log,
                          outer_stop=outer_stop).go()


def validate_workflow_inputs(wf: Workflow, inputs: dict) -> dict:
    from swamp.models.inputs import validate_inputs

    if wf.inputs is None and not inputs:
        return {}
    schema = wf.inputs if wf.inputs is not None else {"properties": {}}
    return validate_inputs(schema, inputs, what=f"inputs of workflow {wf.name!r}")


def plan(wf: Workflow) -> list[JobRun]:
    """The record's skeleton: jobs and their steps in the order they run
    (a forEach step is one entry until it expands)."""
    jobs = {j.name: j for j in wf.jobs}
    out = []
    for level in dag.job_levels(wf):
        for jname in level:
            job = jobs[jname]
            steps = {s.name: s for s in job.steps}
            entries = [StepRun(name=sname, task=steps[sname].task.type)
                       for slevel in dag.step_levels(job) for sname in slevel]
            out.append(JobRun(name=jname, steps=entries))
    return out


def _check_record_matches(wf: Workflow, run: WorkflowRun) -> None:
    jobs = {j.name: {s.name for s in j.steps} for j in wf.jobs}
    for jr in run.jobs:
        if jr.name not in jobs or any(s.declared not in jobs[jr.name] for s in jr.steps):
            raise ValidationError(
                f"workflow {wf.name!r} changed since run {run.id} was suspended: "
                f"job {jr.name!r} no longer matches the record",
                hint="restore the workflow file, or cancel this run and start a new one")


@dataclass
class _Attempt:
    """The attempt in flight of a step with a retry policy."""

    number: int
    of: int
    started: float | None = None
    startedAt: str | None = None
    #: it failed and another attempt follows
    again: bool = False
    recorded: bool = False


@dataclass
class _JobState:
    job: Job
    index: int
    record: JobRun
    steps: dict[str, tuple[int, Step]] = field(default_factory=dict)


class _Execution:
    def __init__(self, engine: Engine, wf: Workflow, source: str, run: WorkflowRun, inputs: dict,
                 stack: tuple[tuple[str, str], ...], *, log: str,
                 outer_stop: Callable[[], bool] | None = None) -> None:
        self.engine = engine
        self.wf = wf
        self.source = source
        self.run = run
        self.inputs = inputs
        self.stack = stack
        self.lock = threading.RLock()
        self.flush_lock = threading.Lock()
        self.stop = threading.Event()
        self.cancel_requested = False
        self.outer_stop = outer_stop  # a nested run's parent's should_stop
        #: the swamp.util.processes.Control of each local step in flight: a cancel stops their processes
        self.controls: set = set()
        self._watching = threading.Lock()  # one thread at a time looks for a cancel request
        self._last_flush = 0.0
        self._flush_interval = FLUSH_INTERVAL
        self._last_cancel_check = time.monotonic()
        self._log: list[str] = [log] if log else []
        self._t0 = time.perf_counter()
        self._started: dict[int, float] = {}
        #: the attempt in flight of each step that has a retry policy (workflows/retries.py), by id(StepRun)
        self._attempts: dict[int, _Attempt] = {}
        run_info = {"id": run.id, "workflowId": run.workflowId, "workflowName": run.workflowName,
                    "startedAt": run.startedAt, "tags": dict(run.tags), "depth": run.depth}
        self.run_info = run_info
        #: ephemeral data of this run: later steps see it, nothing writes it
        self.ephemeral: dict = {}
        #: automatic definitions of the steps that run a type directly, by id
        self.autos: dict = {}
        self.scope = Scope(engine.repo, source, inputs, run_info, ephemeral=self.ephemeral, probe=self.probe)
        #: ``steps.NAME.signal``: the messages of the signal waits settled so far
        self.steps_seen: dict = {s.name: _signal_view(s.signal) for _, s in run.steps()
                                 if s.signal is not None and s.signal.outcome is not None}
        self.scope.variables["steps"] = self.steps_seen
        self.jobs: dict[str, _JobState] = {}
        for i, job in enumerate(wf.jobs):
            st = _JobState(job, i, run.job(job.name))
            st.steps = {s.name: (k, s) for k, s in enumerate(job.steps)}
            self.jobs[job.name] = st

    def acting_for(self) -> str | None:
        """Who this run's steps act for: whoever continued it last, else
        whoever started it (their method runs' ``initiatedBy``)."""
        return self.run.resumedBy or self.run.initiatedBy

    # ------------------------------------------------------------ the run
    def go(self) -> WorkflowRun:
        self.engine._prime()
        with self.engine.host.holding(self.run), tracing.span(
                "swamp.workflow", workflow=self.wf.name, run=self.run.id, depth=self.run.depth):
            return self._go()

    def _go(self) -> WorkflowRun:
        with self.lock:
            self.run.status = "running"
        self.log(f"run {self.run.id} of workflow {self.wf.name}: running")
        self.flush(force=True)
        interrupted = False
        try:
            cap = self.wf.concurrency or 0
            for level in dag.job_levels(self.wf):
                if self.should_stop():
                    break
                run_parallel([lambda n=n: self.run_job(self.jobs[n]) for n in level], cap, self.stop)
        except KeyboardInterrupt:
            interrupted = True
            self.cancel_requested = True
            raise
        finally:
            self.finish(interrupted)
        return self.run

    def finish(self, interrupted: bool) -> None:
        with self.lock:
            run = self.run
            for jr in run.jobs:
                if jr.status == "running":
                    jr.status = _job_status(jr)
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
                run.failureReason = s.error
            else:
                run.failedStep = run.failureReason = None
            # Inputs are kept while the run can continue: suspended, or
            # failed (resume --from STEP restarts it with them).
            run.inputs = dict(self.inputs) if run.status in ("suspended", "failed") else None
            run.completedAt = None if run.status == "suspended" else clock.isoformat()
            run.durationMs = (run.durationMs or 0) + int((time.perf_counter() - self._t0) * 1000)
        self.log(f"run {run.id}: {run.status}" + (f" ({run.failedStep}: {run.failureReason})"
                                                  if run.status == "failed" else ""))
        marker = records.cancel_path(run.workflowId, run.id)
        if self.engine.ds.exists(marker):
            self.engine.ds.delete(marker)  # answered: it must not cancel a later resume
        self.flush(force=True)  # (its session publishes the delete too)

    def should_stop(self) -> bool:
        """Whether the run stops (a cancel request, seen by a pull at most
        every CANCEL_CHECK_INTERVAL, or an interrupt). When it does, the
        processes of its local steps in flight are stopped."""
        if self.outer_stop is not None and not self.stop.is_set() and self.outer_stop():
            self.log("the parent run stops")
            self.cancel_requested = True
            self.stop.set()
        if self.stop.is_set():
            self.stop_steps()
            return True
        if not self._watching.acquire(blocking=False):
            return False  # another thread is looking right now
        try:
            now = time.monotonic()
            if now - self._last_cancel_check < CANCEL_CHECK_INTERVAL:
                return False
            self._last_cancel_check = now
            self.engine.host.watch()
            marker = records.cancel_path(self.run.workflowId, self.run.id)
            if self.engine.ds.exists(marker):
                from swamp.workflows.runs import cancel_requester

                by = cancel_requester(self.engine.ds, marker)
                self.log("cancel requested" + (f" by {by}" if by else ""))
                with self.lock:
                    self.run.cancelledBy = by
                self.cancel_requested = True
                self.stop.set()
        finally:
            self._watching.release()
        if self.stop.is_set():
            self.stop_steps()
            return True
        return False

    def stop_steps(self) -> None:
        """Cancel every local step in flight: its processes get SIGTERM,
        then SIGKILL after a grace period (swamp.util.processes)."""
        with self.lock:
            controls = list(self.controls)
        for control in controls:
            control.cancel()

    @contextlib.contextmanager
    def cancellable(self, timeout: float | None = None):
        """While a local step's method runs: its Control, registered so a
        cancel stops it, and a watch for the cancel request (a pull at most
        every CANCEL_CHECK_INTERVAL) however the step was scheduled. With a
        ``timeout`` (seconds), the control is stopped when it runs out, its
        reason the step's error (workflows/retries.py)."""
        from swamp.util import processes
        from swamp.workflows.retries import timed_out

        control = processes.Control()
        done = threading.Event()
        timer = None
        if timeout is not None:
            timer = threading.Timer(timeout, lambda: control.cancel(reason=timed_out(timeout)))
            timer.daemon = True
            timer.start()
        with self.lock:
            self.controls.add(control)

        def watch() -> None:
            while not done.wait(CANCEL_CHECK_INTERVAL / 4):
                try:
                    if self.should_stop():
                        return
                except Exception:  # noqa: BLE001 - a failed pull is retried at the next look
                    pass

        watcher = threading.Thread(target=tracing.carry(watch), name="swamp-cancel-watch", daemon=True)
        watcher.start()
        if self.stop.is_set():  # stopped while the step was being prepared
            control.cancel()
        try:
            yield control
        finally:
            if timer is not None:
                timer.cancel()
            done.set()
            with self.lock:
                self.controls.discard(control)
            watcher.join()

    # ------------------------------------------------------------- a job
    @tracing.traced("swamp.job", lambda self, st: {"job": st.job.name}, after=lambda self, st: {"status": st.record.status})
    def run_job(self, st: _JobState) -> None:
        jr = st.record
        if jr.status in conditions.TERMINAL:
            return
        verdict = self.dependencies(
            [(d.condition, self.job_status(d.job)) for d in st.job.dependsOn])
        if verdict == "blocked":
            with self.lock:
                jr.status = "pending"
            return
        if verdict is not None:
            self.skip_job(st, verdict)
            return
        with self.lock:
            jr.status = "running"
            jr.startedAt = jr.startedAt or clock.isoformat()
        gate = Gate(self.cap(st.job.concurrency))
        for level in dag.step_levels(st.job):
            if self.should_stop():
                break
            units: list[Unit] = []
            for sname in level:
                k, step = st.steps[sname]
                units += self.step_units(st, k, step, gate)
            run_units(units, self.stop, self.should_stop)
            self.flush()
        with self.lock:
            jr.status = _job_status(jr)
            if jr.status in conditions.TERMINAL:
                jr.completedAt = clock.isoformat()
        self.log(f"job {jr.name}: {jr.status}")

    def cap(self, own: int | None) -> int:
        """step > job > workflow > SWAMP_MAX_CONCURRENT_STEPS: the most
        specific cap that is set (0 means no cap)."""
        for c in (own, self.wf.concurrency):
            if c is not None:
                return c
        return self.engine.max_concurrent

    def job_status(self, name: str) -> str:
        with self.lock:
            status = self.jobs[name].record.status
        return status if status in conditions.TERMINAL else "pending"

    def step_status(self, st: _JobState, declared: str) -> str:
        with self.lock:
            return conditions.aggregate(s.status for s in st.record.steps if s.declared == declared)

    def dependencies(self, deps: list[tuple[Any, str]]) -> tuple[str, str] | str | None:
        """None when every dependency's condition holds; "blocked" while a
        dependency has not finished; else (skipReason, detail)."""
        if any(status not in conditions.TERMINAL for _, status in deps):
            return "blocked"
        for cond, status in deps:
            if not conditions.holds(cond, status):
                return conditions.skip_reason(cond), f"condition {cond.type!r} does not hold: the dependency {status}"
        return None

    def skip_job(self, st: _JobState, verdict: tuple[str, str]) -> None:
        reason, detail = verdict
        with self.lock:
            st.record.status = "skipped"
            st.record.skipReason = reason
            for s in st.record.steps:
                if s.status == "pending":
                    s.status, s.skipReason, s.detail = "skipped", reason, "the job was skipped"
        self.log(f"job {st.record.name}: skipped ({reason}: {detail})")
        self.flush()

    # ------------------------------------------------------------ a step
    def entries(self, st: _JobState, declared: str) -> list[StepRun]:
        with self.lock:
            return [s for s in st.record.steps if s.declared == declared]

    def step_units(self, st: _JobState, k: int, step: Step, job_gate: Gate) -> list[Unit]:
        entries = self.entries(st, step.name)
        if all(e.status in conditions.TERMINAL for e in entries):
            return []
        deps = [(d.condition, self.step_status(st, d.step)) for d in step.dependsOn]
        names = [d.step for d in step.dependsOn]
        verdict = self.dependencies(deps)
        if verdict == "blocked":
            return []
        if verdict is not None:
            reason, _ = verdict
            failed_dep = next((n for (c, s), n in zip(deps, names) if not conditions.holds(c, s)), "")
            for e in entries:
                if e.status == "pending":
                    self.set_skipped(st, e, reason, f"dependency {failed_dep!r}: {verdict[1]}")
            return []
        where = f"jobs[{st.index}].steps[{k}]"
        if step.forEach is not None and len(entries) == 1 and entries[0].forEachOf is None:
            entries = self.expand(st, step, entries[0], where)
        gate = Gate(step.concurrency) if step.concurrency is not None else job_gate
        units = []
        for e in entries:
            if e.status in conditions.TERMINAL:
                continue
            unit = self.unit(st, step, e, where, gate)
            if unit is not None:
                units.append(unit)
        return units

    def expand(self, st: _JobState, step: Step, placeholder: StepRun, where: str) -> list[StepRun]:
        from swamp.expr.template import has_expressions
        from swamp.workflows import foreach

        var = step.forEach.item
        try:
            value = self.scope.render(step.forEach.in_, f"{where}.forEach.in")
            render_name = None
            if has_expressions(step.name):
                def render_name(item):
                    return self.scope.render(step.name, f"{where}.name", {var: item})
            expansions = foreach.expand(step.name, value, render_name)
        except SwampError as e:
            self.set_failed(st, placeholder, e.message, step)
            return []
        new = [StepRun(name=x.name, task=step.task.type, forEachOf=step.name, item=x.item) for x in expansions]
        with self.lock:
            steps = st.record.steps
            i = steps.index(placeholder)
            steps[i:i + 1] = new
        self.log(f"step {st.record.name}/{step.name}: {len(new)} item(s)")
        return new

    def unit(self, st: _JobState, step: Step, e: StepRun, where: str, gate: Gate) -> Unit | None:
        """The work of one step. Only its lane is decided now (for a
        model_method step, which model it runs); the guard and the task's
        expressions are evaluated when it runs, so they see what the steps
        before it in its lane wrote."""
        item = {step.forEach.item: e.item} if step.forEach is not None else UNSET
        lane: tuple = ("step", st.record.name, e.name)
        definition = None
        if step.task.type == "model_method":
            try:
                definition = self.find_model(step, e, where, item)
            except SwampError as err:
                self.set_failed(st, e, _with_close_match(err), step)
                return None
            lane = ("model", definition.id)
        return Unit(lane, gate, lambda: self.execute(st, step, e, where, item, definition))

    @tracing.traced("swamp.step", lambda self, st, step, e, *_: {"job": st.job.name, "step": e.name, "task": step.task.type},
                    after=lambda self, st, step, e, *_: {"status": e.status})
    def execute(self, st: _JobState, step: Step, e: StepRun, where: str, item: Any, definition) -> None:
        try:
            if step.guard is not None and e.status == "pending":
                if truthy(self.scope.condition(step.guard, f"{where}.guard", item)):
                    self.set_skipped(st, e, "guarded", "the guard is true")
                    return
            task = step.task
            if task.type == "manual_approval":
                self.approval(st, step, e, where, item)
            elif task.type == "assert":
                self.assertion(st, step, e, where, item)
            elif task.type == "wait_for_signal":
                self.signal_wait(st, step, e, where, item)
            elif task.type == "model_method":
                self.run_method(st, step, e, where, item, definition)
            else:
                self.run_workflow(st, step, e, *self.prepare_workflow(step, e, where, item))
        except SwampError as err:
            self.set_failed(st, e, err.message, step)

    # ----------------------------------------------------------- tasks
    def find_model(self, step: Step, e: StepRun, where: str, item: Any):
        from swamp.models.definitions import find_definition

        if step.task.modelType is not None:
            return self.direct_model(step, e, where, item)
        model = self.scope.render(step.task.modelIdOrName, f"{where}.task.modelIdOrName", item)
        if not isinstance(model, str):
            raise ValidationError("modelIdOrName must give a string")
        with self.lock:
            e.model = model
        return find_definition(self.engine.repo, model)[1]

    def direct_model(self, step: Step, e: StepRun, where: str, item: Any):
        """A step running a type directly (modelType, modelName): the
        hand-written definition of that name and type, or the automatic
        one with the step's globalArgs (saved in the step's session)."""
        from swamp.errors import ConflictError
        from swamp.models import auto_definitions
        from swamp.models.definition_files import iter_definition_files
        from swamp.models.definitions import load_definition

        task = step.task
        type_name = self.scope.render(task.modelType, f"{where}.task.modelType", item)
        name = self.scope.render(task.modelName, f"{where}.task.modelName", item)
        if not isinstance(type_name, str) or not isinstance(name, str):
            raise ValidationError("modelType and modelName must give strings")
        with self.lock:
            e.model = name
        for path in iter_definition_files(self.engine.repo):
            if path.stem == name:
                own = load_definition(path)
                if own.type != type_name:
                    raise ConflictError(f"model {name!r} is a {own.type}, not a {type_name}")
                return own
        model_type = self.engine.runner.registry.get(type_name)
        global_args = self.scope.render(task.globalArgs, f"{where}.task.globalArgs", item) or {}
        if not isinstance(global_args, dict):
            raise ValidationError(f"globalArgs must give a map, not {type(global_args).__name__}")
        unknown = sorted(set(global_args) - set(model_type.global_arguments.model_fields))
        if unknown:
            raise ValidationError(f"{type_name} takes no global argument(s) {', '.join(unknown)}")
        definition = auto_definitions.updated(auto_definitions.find(self.engine.repo, type_name, name),
                                              model_type, name, global_args)
        with self.lock:
            self.autos[definition.id] = definition
        return definition

    def prepare_method(self, step: Step, e: StepRun, where: str, item: Any, definition):
        task = step.task
        method = self.scope.render(task.methodName, f"{where}.task.methodName", item)
        inputs = self.scope.render(task.inputs, f"{where}.task.inputs", item) or {}
        if not isinstance(method, str):
            raise ValidationError("methodName must give a string")
        if not isinstance(inputs, dict):
            raise ValidationError(f"task inputs must give a map, not {type(inputs).__name__}")
        with self.lock:
            e.method = method
        return self.engine.runner.prepare(definition, method, inputs, variables={"run": self.run_info})

    def run_method(self, st: _JobState, step: Step, e: StepRun, where: str, item: Any, definition) -> None:
        """The step's attempts (workflows/retries.py): one, as it always
        was, or up to ``retries`` more after a failed one, each in a session
        of its own, with a pause before each that a cancel cuts short."""
        from swamp.workflows.retries import policy_for

        policy = policy_for(self.wf, step)
        if policy.plain:
            self.attempt_method(st, step, e, where, item, definition, policy)
            return
        for number in range(1, policy.attempts + 1):
            with self.lock:
                self._attempts[id(e)] = _Attempt(number, policy.attempts)
                if policy.attempts > 1:
                    e.attempt, e.maxAttempts = number, policy.attempts
            try:
                self.attempt_method(st, step, e, where, item, definition, policy)
            finally:
                with self.lock:
                    again = self._attempts.pop(id(e)).again
            if not again:
                return
            delay = policy.delay_after(number)
            self.log(f"step {st.record.name}/{e.name}: attempt {number}/{policy.attempts} failed: "
                     f"{e.attempts[-1].error}; attempt {number + 1} in {delay:g} s")
            if self.pause(delay):  # the run stops: the step ends with its last attempt's error
                self.set_failed(st, e, e.attempts[-1].error or "failed", step)
                return

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds``, or less when the run stops: then True."""
        end = time.monotonic() + seconds
        while not self.should_stop():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.stop.wait(min(left, CANCEL_CHECK_INTERVAL / 4))
        return True

    def final_attempt(self, e: StepRun) -> bool:
        """Whether a failure of ``e`` now ends it (no retry follows)."""
        with self.lock:
            a = self._attempts.get(id(e))
        return a is None or a.number >= a.of or self.stop.is_set()

    def method_ended(self, st: _JobState, step: Step, e: StepRun, status: str, error: str | None,
                     *, save: bool = True) -> None:
        """A method ran (here or on a worker): the step succeeded, or failed,
        or this attempt failed and another follows (the step stays running)."""
        if status == "succeeded":
            self.set_done(st, e, "succeeded", save=save)
        elif not self.final_attempt(e):
            with self.lock:
                a = self._attempts[id(e)]
                a.again = True
                self._record_attempt(e, "failed", error or status)
                e.outputId, e.dataArtifacts = None, []
            self.notify(st, e)
            if save:
                self.flush()
        else:
            self.set_failed(st, e, error or status, step, save=save)

    def attempt_method(self, st: _JobState, step: Step, e: StepRun, where: str, item: Any, definition,
                       policy) -> None:
        """One session: the task's method and inputs, and the method's
        arguments, are resolved once after its pull; the run record goes
        out in the same commit as what the method wrote."""
        command = f"workflow run {self.run.workflowName}: {st.record.name}/{e.name}"
        dispatch = getattr(self.engine.host, "dispatch", None)
        if dispatch is not None and dispatch(self, st, step, e, where, item, definition, command):
            return  # placed: the host ran it on a worker (app/remote_steps.py)
        try:
            with self.engine.host.step(definition, command):
                if definition.id in self.autos:  # a type run directly: its definition is kept
                    from swamp.models import auto_definitions

                    auto_definitions.save(self.engine.ds, definition)
                try:
                    prepared = self.prepare_method(step, e, where, item, definition)
                except SwampError as err:
                    self.set_failed(st, e, _with_close_match(err), step, save=False)
                    self.write_record()
                    return
                try:
                    overrides = self.data_overrides(step, prepared)
                except SwampError as err:
                    self.set_failed(st, e, err.message, step, save=False)
                    self.write_record()
                    return
                self.set_running(st, e)
                with self.cancellable(policy.timeout) as control:
                    rec = self.engine.runner.execute(
                        prepared, triggered_by="workflow", initiated_by=self.acting_for(),
                        workflow_run_id=self.run.id,
                        workflow_name=self.run.workflowName, step_name=e.name, overrides=overrides,
                        ephemeral=self.ephemeral, control=control, discard_failed=not self.final_attempt(e))
                with self.lock:
                    e.outputId = rec.id
                    e.dataArtifacts = list(rec.dataArtifacts)
                self.scope.data_changed()  # its writes, ephemeral ones included
                self.method_ended(st, step, e, rec.status, rec.error, save=False)
                self.write_record()
        except SwampError as err:  # the session's own failure: a lease wait, a push
            self.set_failed(st, e, err.message, step)
        except Exception as err:  # a bug, recorded where the user will look
            self.log("".join(traceback.format_exception(err)).rstrip())
            self.set_failed(st, e, f"internal error: {type(err).__name__}: {err}", step)

    def probe(self, model: str, method: str, inputs: dict) -> Any:
        """``model.method(NAME, METHOD)`` in a guard or an assert: run the
        method now, in a session of its own, and give the content of the
        first resource it wrote (or its status and error when it wrote
        none)."""
        import json

        from swamp.models.definitions import find_definition

        definition = find_definition(self.engine.repo, model)[1]
        with self.engine.host.step(definition, f"workflow run {self.run.workflowName}: probe {model}.{method}"):
            prepared = self.engine.runner.prepare(definition, method, inputs, variables={"run": self.run_info})
            rec = self.engine.runner.execute(prepared, triggered_by="workflow", initiated_by=self.acting_for(),
                                             workflow_run_id=self.run.id,
                                             workflow_name=self.run.workflowName, ephemeral=self.ephemeral)
            self.log(f"probe {model}.{method}: {rec.status} (output {rec.id})")
            first = next((a for a in rec.dataArtifacts if a["kind"] == "resource"), None)
            content = None
            if first is not None:
                from swamp.data.repository import DataRepository

                data = DataRepository(self.engine.ds)
                raw = data.content(data.get(definition.type, definition.id, first["name"], first["version"]))
                content = json.loads(raw)
        self.scope.data_changed()
        if content is None:
            return {"status": rec.status, "error": rec.error}
        return content

    def data_overrides(self, step: Step, prepared) -> dict[str, dict]:
        """The step's dataOutputOverrides by spec name; each ``vary`` name is
        looked up in the step's inputs, then the workflow's."""
        out = {}
        for o in step.dataOutputOverrides:
            values = []
            for key in o.vary:
                if key in (prepared.used_inputs or {}):
                    value = prepared.used_inputs[key]
                elif key in self.inputs:
                    value = self.inputs[key]
                else:
                    raise ValidationError(f"dataOutputOverrides of {o.specName!r}: vary names {key!r}, "
                                          "which is neither an input of the step nor of the workflow")
                values.append(str(value).lower() if isinstance(value, bool) else str(value))
            out[o.specName] = {"lifetime": o.lifetime, "garbageCollection": o.garbageCollection,
                               "tags": dict(o.tags), "suffix": "".join(f"-{v}" for v in values)}
        return out

    def prepare_workflow(self, step: Step, e: StepRun, where: str, item: Any) -> tuple:
        from swamp.workflows.files import find_workflow

        task = step.task
        name = self.scope.render(task.workflowIdOrName, f"{where}.task.workflowIdOrName", item)
        inputs = self.scope.render(task.inputs, f"{where}.task.inputs", item) or {}
        if not isinstance(name, str):
            raise ValidationError("workflowIdOrName must give a string")
        if not isinstance(inputs, dict):
            raise ValidationError(f"task inputs must give a map, not {type(inputs).__name__}")
        path, child = find_workflow(self.engine.repo, name)
        cid = workflow_id(child)
        if cid in (i for i, _ in self.stack):
            names = [n for _, n in self.stack] + [child.name]
            raise ValidationError(f"workflow cycle: {' -> '.join(names)}",
                                  hint="a workflow cannot run itself, directly or through others")
        if len(self.stack) > MAX_DEPTH:  # the child's depth would be len(self.stack)
            raise ValidationError(f"workflows nest deeper than {MAX_DEPTH} levels")
        with self.lock:
            e.childWorkflow, e.childWorkflowId = child.name, cid
        return path, child, inputs

    def run_workflow(self, st: _JobState, step: Step, e: StepRun, path, child: Workflow, inputs: dict) -> None:
        from swamp.workflows.files import shown_path

        source = shown_path(self.engine.repo, path)  # an extension's workflow is outside the repository
        self.set_running(st, e)
        try:
            if e.childRunId:
                result = self.resume_child(child, source, e.childRunId)
            else:
                result = self.engine.start(child, source, inputs, fail_on=self.run.failOn,
                                           parent=Parent(self.run, self.stack, self.should_stop))
        except SwampError as err:
            self.set_failed(st, e, err.message, step)
            return
        with self.lock:
            e.childRunId = result.id
        if result.status == "succeeded":
            self.set_done(st, e, "succeeded")
        elif result.status == "suspended":
            self.set_done(st, e, "waiting_approval")
        else:
            self.set_failed(st, e, f"nested run {result.id} of {child.name} {result.status}"
                            + (f": {result.failureReason}" if result.failureReason else ""), step)

    def resume_child(self, child: Workflow, source: str, run_id: str) -> WorkflowRun:
        run = records.load(self.engine.ds, workflow_id(child), run_id)
        if run.status != "suspended":
            return run  # finished (resumed on its own, or cancelled)
        inputs = Engine.resumable(child, run)
        run = self.engine.host.claim(workflow_id(child), run_id)
        return self.engine.resume(child, source, run, inputs, stack=self.stack + ((run.workflowId, child.name),),
                                  outer_stop=self.should_stop)

    def approval(self, st: _JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
        task = step.task
        a = e.approval
        if a is None:
            prompt = self.scope.render(task.prompt, f"{where}.task.prompt", item)
            with self.lock:
                e.approval = Approval(prompt=str(prompt), requestedAt=clock.isoformat(),
                                      timeoutSeconds=task.timeout)
                e.startedAt = e.startedAt or e.approval.requestedAt
                e.status = "waiting_approval"
            self.log(f"step {st.record.name}/{e.name}: waiting for approval: {prompt}")
            self.notify(st, e)
            return
        if a.decision == "approved":
            self.set_done(st, e, "succeeded")
        elif a.decision == "rejected":
            self.set_failed(st, e, f"rejected by {a.decidedBy}" + (f": {a.reason}" if a.reason else ""), step)
        elif a.timeoutSeconds and clock.now() > clock.parse_iso(a.requestedAt).timestamp() + a.timeoutSeconds:
            self.set_failed(st, e, f"no decision within {a.timeoutSeconds} s", step)

    def signal_wait(self, st: _JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
        """A wait_for_signal step: the first time, it starts waiting (the run
        suspends once nothing else can proceed). Later (a resume), its
        write-once outcome record decides: a message, or the timeout,
        settled on the spot if it passed with no message (the host settles
        it create-only, so a signal racing it gets one answer)."""
        from swamp.workflows import signals

        task = step.task
        w = e.signal
        if w is None:
            prompt = self.scope.render(task.prompt, f"{where}.task.prompt", item) if task.prompt else None
            with self.lock:
                e.signal = SignalWait(prompt=None if prompt is None else str(prompt),
                                      requestedAt=clock.isoformat(), timeoutSeconds=task.timeout)
                e.startedAt = e.startedAt or e.signal.requestedAt
                e.status = "waiting_signal"
            self.log(f"step {st.record.name}/{e.name}: waiting for a signal"
                     + (f" (at most {task.timeout} s)" if task.timeout else "") + (f": {prompt}" if prompt else ""))
            self.notify(st, e)
            return
        outcome = signals.read_outcome(self.engine.ds, self.run.workflowId, self.run.id, st.record.name, e.name,
                                       w.requestedAt)
        settle = getattr(self.engine.host, "settle_signal", None)
        if outcome is None and signals.expired(w) and settle is not None:
            outcome = settle(self.run, st.record.name, e.name,
                             task.default if task.onTimeout == "continue" else None)
        if outcome is None:
            return  # still waiting
        with self.lock:
            w.outcome, w.message, w.by, w.at = outcome["outcome"], outcome.get("message"), outcome.get("by"), \
                outcome.get("at")
            self.steps_seen[e.name] = _signal_view(w)
        self.log(f"step {st.record.name}/{e.name}: {signals.describe(outcome)}")
        if w.outcome == "signalled" or task.onTimeout == "continue":
            self.set_done(st, e, "succeeded")
        else:
            self.set_failed(st, e, f"no signal within {w.timeoutSeconds} s", step)

    def assertion(self, st: _JobState, step: Step, e: StepRun, where: str, item: Any) -> None:
        task = step.task
        self.set_running(st, e)
        value = self.scope.condition(task.expr, f"{where}.task.expr", item)
        if not isinstance(value, bool):
            raise ValidationError(f"an assert's expr must give true or false, not {value!r}")
        severity = task.assert_severity
        if value:
            with self.lock:
                e.assertResult = AssertResult(passed=True, severity=severity)
            self.set_done(st, e, "succeeded")
            return
        message = str(self.scope.render(task.message, f"{where}.task.message", item))
        fails_run = SEVERITY_RANK[severity] >= SEVERITY_RANK[self.run.failOn]
        with self.lock:
            e.assertResult = AssertResult(passed=False, severity=severity, message=message, failsRun=fails_run)
        # Below the --fail-on threshold a failed assert is a warning: the
        # step fails, the job and the run do not.
        self.set_failed(st, e, f"assertion failed ({severity}): {message}", step, tolerated=not fails_run)

    # ------------------------------------------------------ bookkeeping
    def set_running(self, st: _JobState, e: StepRun) -> None:
        with self.lock:
            e.status = "running"
            e.error = None
            a = self._attempts.get(id(e))
            if a is not None:
                a.started, a.startedAt = time.perf_counter(), clock.isoformat()
            if a is None or a.number == 1 or id(e) not in self._started:  # a step's time spans its attempts
                e.startedAt = clock.isoformat()
                self._started[id(e)] = time.perf_counter()
        self.notify(st, e)

    def _record_attempt(self, e: StepRun, status: str, error: str | None) -> None:
        """Under the lock: the outcome of the attempt in flight, when the
        step may be tried more than once."""
        a = self._attempts.get(id(e))
        if a is None or a.of == 1 or a.recorded:
            return
        a.recorded = True
        ms = int((time.perf_counter() - a.started) * 1000) if a.started is not None else None
        e.attempts.append(StepAttempt(number=a.number, status=status, startedAt=a.startedAt,
                                      completedAt=clock.isoformat(), durationMs=ms, error=error,
                                      outputId=e.outputId))

    def _end(self, e: StepRun) -> None:
        e.completedAt = clock.isoformat()
        self._record_attempt(e, "succeeded" if e.status == "succeeded" else "failed", e.error)
        t0 = self._started.pop(id(e), None)
        if t0 is not None:
            e.durationMs = int((time.perf_counter() - t0) * 1000)

    def set_done(self, st: _JobState, e: StepRun, status: str, *, save: bool = True) -> None:
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

    def set_failed(self, st: _JobState, e: StepRun, message: str, step: Step, *, tolerated: bool = False,
                   save: bool = True) -> None:
        with self.lock:
            e.status = "failed"
            e.error = message
            if step.allowFailure or tolerated:
                e.allowedFailure = True
            self._end(e)
        self.log(f"step {st.record.name}/{e.name}: failed"
                 + (" (allowed)" if e.allowedFailure else "")
                 + (f" ({e.attempt_note})" if e.attempt_note else "") + f": {message}")
        self.notify(st, e)
        if save:
            self.flush()

    def set_skipped(self, st: _JobState, e: StepRun, reason: str, detail: str) -> None:
        with self.lock:
            e.status, e.skipReason, e.detail = "skipped", reason, detail
        self.log(f"step {st.record.name}/{e.name}: skipped ({reason}: {detail})")
        self.notify(st, e)

    def notify(self, st: _JobState, e: StepRun) -> None:
        if self.engine.observer is not None:
            self.engine.observer(self.run, st.record, e)

    def log(self, line: str) -> None:
        with self.lock:
            self._log.append(f"{clock.isoformat()} {line}\n")

    def flush(self, *, force: bool = False) -> None:
        """Save the record and the log in a session of their own, at most
        every FLUSH_INTERVAL seconds unless forced."""
        now = time.monotonic()
        if not force and now - self._last_flush < self._flush_interval:
            return
        self.engine.host.save(self.write_record, f"workflow run {self.run.workflowName}")
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
            records.write(self.engine.ds, self.run.workflowId, self.run.id, data, log)


def _signal_view(w: SignalWait) -> dict:
    return {"signal": w.message, "outcome": w.outcome, "by": w.by, "at": w.at}


def _job_status(jr: JobRun) -> str:
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


def _with_close_match(err: SwampError) -> str:
    """A step's error with the did-you-mean of its hint, as workflow validate says it."""
    close = err.hint if err.hint and err.hint.startswith("did you mean") else None
    return err.message + (f" ({close})" if close else "")
