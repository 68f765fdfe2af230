"""The run loop: jobs level by level, the steps of each job level by
level, each level's units concurrently within their caps (scheduler.py).

Per step, in order: its dependency conditions (unmet: skipped, reason
``dependency`` or ``condition``), forEach expansion (run_foreach.py), its
guard (truthy: skipped, ``guarded``), its task (one module per task type:
task_method.py, task_workflow.py, task_approval.py, task_signal.py,
task_assert.py). The run's record and its transitions are RunState's
(run_state.py); whether it stops is Stopping's (run_stop.py)."""

from __future__ import annotations

from typing import Any, Callable

from swamp.errors import SwampError
from swamp.util import clock, tracing
from swamp.workflows import conditions, dag, run_foreach, task_approval, task_assert, task_method, task_signal, \
    task_workflow
from swamp.workflows.expressions import UNSET, Scope, truthy
from swamp.workflows.records import StepRun, WorkflowRun
from swamp.workflows.run_state import JobState, RunState, job_status
from swamp.workflows.run_stop import Stopping
from swamp.workflows.scheduler import Gate, Unit, run_parallel, run_units
from swamp.workflows.schema import Step, Workflow
from swamp.workflows.step_model import find_model, with_close_match

#: the task types run by a function of their own: fn(execution, job state, step, entry, where, item)
TASKS = {
    "manual_approval": task_approval.approval,
    "assert": task_assert.assertion,
    "wait_for_signal": task_signal.signal_wait,
    "workflow": task_workflow.run_workflow,
}


class Execution:
    """One run executing: its workflow, inputs and scope, its state, and
    the loop over its jobs and steps."""

    def __init__(self, engine, wf: Workflow, source: str, run: WorkflowRun, inputs: dict,
                 stack: tuple[tuple[str, str], ...], *, log: str,
                 outer_stop: Callable[[], bool] | None = None) -> None:
        self.engine = engine
        self.wf = wf
        self.source = source
        self.inputs = inputs
        self.stack = stack
        self.state = RunState(run, engine.host, engine.ds, engine.observer, log=log)
        self.stopping = Stopping(self.state, outer_stop=outer_stop)
        run_info = {"id": run.id, "workflowId": run.workflowId, "workflowName": run.workflowName,
                    "startedAt": run.startedAt, "tags": dict(run.tags), "depth": run.depth}
        self.run_info = run_info
        #: ephemeral data of this run: later steps see it, nothing writes it
        self.ephemeral: dict = {}
        #: automatic definitions of the steps that run a type directly, by id
        self.autos: dict = {}
        #: the workflow's ``concurrency``: a cap on the units of the whole run at once
        self.run_gate = Gate(wf.concurrency or 0)
        self.scope = Scope(engine.repo, source, inputs, run_info, ephemeral=self.ephemeral,
                           probe=lambda model, method, args: task_method.probe(self, model, method, args))
        #: ``steps.NAME.signal``: the messages of the signal waits settled so far
        self.steps_seen: dict = {s.name: task_signal.signal_view(s.signal) for _, s in run.steps()
                                 if s.signal is not None and s.signal.outcome is not None}
        self.scope.variables["steps"] = self.steps_seen
        self.jobs: dict[str, JobState] = {}
        for i, job in enumerate(wf.jobs):
            st = JobState(job, i, run.job(job.name))
            st.steps = {s.name: (k, s) for k, s in enumerate(job.steps)}
            self.jobs[job.name] = st

    # ------------------------------------------------------------ the run
    def go(self) -> WorkflowRun:
        run = self.state.run
        self.engine._prime()
        with self.engine.host.holding(run), tracing.span(
                "swamp.workflow", workflow=self.wf.name, run=run.id, depth=run.depth):
            return self._go()

    def _go(self) -> WorkflowRun:
        state = self.state
        with state.lock:
            state.run.status = "running"
        state.log(f"run {state.run.id} of workflow {self.wf.name}: running")
        state.flush(force=True)
        interrupted = False
        try:
            cap = self.wf.concurrency or 0
            for level in dag.job_levels(self.wf):
                if self.stopping.should_stop():
                    break
                run_parallel([lambda n=n: self.run_job(self.jobs[n]) for n in level], cap, state.stop)
        except KeyboardInterrupt:
            interrupted = True
            state.cancel_requested = True
            raise
        finally:
            state.finish(self.inputs, interrupted)
        return state.run

    # ------------------------------------------------------------- a job
    @tracing.traced("swamp.job", lambda self, st: {"job": st.job.name}, after=lambda self, st: {"status": st.record.status})
    def run_job(self, st: JobState) -> None:
        state = self.state
        jr = st.record
        if jr.status in conditions.TERMINAL:
            return
        verdict = self.dependencies(
            [(d.condition, self.job_status(d.job)) for d in st.job.dependsOn])
        if verdict == "blocked":
            with state.lock:
                jr.status = "pending"
            return
        if verdict is not None:
            self.skip_job(st, verdict)
            return
        with state.lock:
            jr.status = "running"
            jr.startedAt = jr.startedAt or clock.isoformat()
        gate = Gate(self.cap(st.job.concurrency), parent=self.run_gate)
        for level in dag.step_levels(st.job):
            if self.stopping.should_stop():
                break
            units: list[Unit] = []
            for sname in level:
                k, step = st.steps[sname]
                units += self.step_units(st, k, step, gate)
            run_units(units, state.stop, self.stopping.should_stop)
            state.flush()
        with state.lock:
            jr.status = job_status(jr)
            if jr.status in conditions.TERMINAL:
                jr.completedAt = clock.isoformat()
        state.log(f"job {jr.name}: {jr.status}")

    def cap(self, own: int | None) -> int:
        """step > job > workflow > SWAMP_MAX_CONCURRENT_STEPS: the most
        specific cap that is set (0 means no cap)."""
        for c in (own, self.wf.concurrency):
            if c is not None:
                return c
        return self.engine.max_concurrent

    def job_status(self, name: str) -> str:
        with self.state.lock:
            status = self.jobs[name].record.status
        return status if status in conditions.TERMINAL else "pending"

    def step_status(self, st: JobState, declared: str) -> str:
        with self.state.lock:
            return conditions.aggregate(s.status for s in st.record.steps if s.declared == declared)

    @staticmethod
    def dependencies(deps: list[tuple[Any, str]]) -> tuple[str, str] | str | None:
        """None when every dependency's condition holds; "blocked" while a
        dependency has not finished; else (skipReason, detail)."""
        if any(status not in conditions.TERMINAL for _, status in deps):
            return "blocked"
        for cond, status in deps:
            if not conditions.holds(cond, status):
                return conditions.skip_reason(cond), f"condition {cond.type!r} does not hold: the dependency {status}"
        return None

    def skip_job(self, st: JobState, verdict: tuple[str, str]) -> None:
        reason, detail = verdict
        with self.state.lock:
            st.record.status = "skipped"
            st.record.skipReason = reason
            for s in st.record.steps:
                if s.status == "pending":
                    s.status, s.skipReason, s.detail = "skipped", reason, "the job was skipped"
        self.state.log(f"job {st.record.name}: skipped ({reason}: {detail})")
        self.state.flush()

    # ------------------------------------------------------------ a step
    def entries(self, st: JobState, declared: str) -> list[StepRun]:
        with self.state.lock:
            return [s for s in st.record.steps if s.declared == declared]

    def step_units(self, st: JobState, k: int, step: Step, job_gate: Gate) -> list[Unit]:
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
                    self.state.set_skipped(st, e, reason, f"dependency {failed_dep!r}: {verdict[1]}")
            return []
        where = f"jobs[{st.index}].steps[{k}]"
        if step.forEach is not None and len(entries) == 1 and entries[0].forEachOf is None:
            entries = run_foreach.expand(self, st, step, entries[0], where)
        gate = Gate(step.concurrency, parent=self.run_gate) if step.concurrency is not None else job_gate
        units = []
        for e in entries:
            if e.status in conditions.TERMINAL:
                continue
            unit = self.unit(st, step, e, where, gate)
            if unit is not None:
                units.append(unit)
        return units

    def unit(self, st: JobState, step: Step, e: StepRun, where: str, gate: Gate) -> Unit | None:
        """The work of one step. Only its lane is decided now (for a
        model_method step, which model it runs); the guard and the task's
        expressions are evaluated when it runs, so they see what the steps
        before it in its lane wrote."""
        item = {step.forEach.item: e.item} if step.forEach is not None else UNSET
        lane: tuple = ("step", st.record.name, e.name)
        definition = None
        if step.task.type == "model_method":
            try:
                definition = find_model(self, step, e, where, item)
            except SwampError as err:
                self.state.set_failed(st, e, with_close_match(err), step)
                return None
            if definition.id in self.autos or all(c is None for c in (step.concurrency, st.job.concurrency,
                                                                       self.wf.concurrency)):
                # no cap set: the steps of one model run one after another, numbered in plan
                # order; with one, its items run at once (their versions are published under
                # the model's lease: docs/sync.md "Concurrent runs of one model")
                lane = ("model", definition.id)
        return Unit(lane, gate, lambda: self.execute(st, step, e, where, item, definition))

    @tracing.traced("swamp.step", lambda self, st, step, e, *_: {"job": st.job.name, "step": e.name, "task": step.task.type},
                    after=lambda self, st, step, e, *_: {"status": e.status})
    def execute(self, st: JobState, step: Step, e: StepRun, where: str, item: Any, definition) -> None:
        try:
            if step.guard is not None and e.status == "pending":
                if truthy(self.scope.condition(step.guard, f"{where}.guard", item)):
                    self.state.set_skipped(st, e, "guarded", "the guard is true")
                    return
            if step.task.type == "model_method":
                task_method.run_method(self, st, step, e, where, item, definition)
            else:
                TASKS[step.task.type](self, st, step, e, where, item)
        except SwampError as err:
            self.state.set_failed(st, e, err.message, step)
