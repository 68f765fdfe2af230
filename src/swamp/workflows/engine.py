"""Running a workflow: the engine and its port (``RunHost``).

``Engine.start`` checks a workflow's structure and inputs (raising before
anything is written), plans its record and runs it; ``resume`` continues a
claimed one. The run itself is ``run_loop.Execution``: jobs level by level,
the steps of each job level by level, each step's task in a module of its
own (task_*.py), the record and its transitions in run_state.py, how the
run stops in run_stop.py. A step waiting for approval suspends the run once
nothing else can proceed; ``resume`` continues from the saved record and
never reruns a finished step.

The engine opens no datastore session itself: the application layer hands
it a ``RunHost`` that holds the run's lease while it executes, runs each
model_method step as one session (the model's lease, a pull, the step's
arguments resolved once, the method, the run record updated, one push,
release), saves the record in a session of its own otherwise, brings
peers' changes in when the engine watches for a cancel request, and
carries a placed step's StepJob to a worker (workflows/placement.py)."""

from __future__ import annotations

import os
import threading
from typing import Callable, ContextManager, Protocol

from swamp.errors import ValidationError
from swamp.util import clock
from swamp.util.problems import joined
from swamp.workflows import dag, records, task_placed
from swamp.workflows.placement import Placement, StepJob, StepOutcome
from swamp.workflows.records import JobRun, StepRun, WorkflowRun
from swamp.workflows.run_loop import Execution
from swamp.workflows.run_state import Parent
from swamp.workflows.schema import Workflow, workflow_id

DEFAULT_MAX_CONCURRENT_STEPS = 4


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


Observer = Callable[[WorkflowRun, JobRun, StepRun], None]


class RunHost(Protocol):
    """What the engine needs from the application layer, which owns the
    datastore sessions and the lease names."""

    def holding(self, run: WorkflowRun) -> ContextManager:
        """The run's lease, held while the run executes."""

    def step(self, definition, command: str, *, cancelled: threading.Event | None = None) -> ContextManager:
        """One session for one model_method step of ``definition``; a wait
        before it (a lease) ends when ``cancelled`` (the run's stop) is set."""

    def publishing(self, definition, command: str) -> ContextManager:
        """The model's lease, taken only while a step's versions are numbered
        and published (docs/sync.md "Concurrent runs of one model")."""

    def save(self, write: Callable[[], None], command: str) -> None:
        """Call ``write`` (it writes the run record) in a session of its own."""

    def watch(self) -> None:
        """Bring peers' changes in (a cancel request may be among them)."""

    def claim(self, workflow_id: str, run_id: str) -> WorkflowRun:
        """Claim a suspended (nested) run to resume it."""

    #: every model_method step must run on a worker (--remote-only)
    remote_only: bool

    def can_dispatch(self) -> bool:
        """Whether placed steps can be sent anywhere (a scheduler is configured)."""

    def dispatch(self, job: StepJob, placement: Placement, *, cancelled: Callable[[], bool],
                 on_log: Callable[[str], None], on_wait: Callable[[str], None]) -> StepOutcome:
        """Run one placed step on a worker that fits ``placement`` (a
        Dispatcher's run); raises NoDispatcherError when none is configured."""


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
            raise ValidationError(f"{source}: " + joined(problems))
        if rerun_of is not None:
            rerun.check(wf, rerun_of)
        values = validate_workflow_inputs(wf, inputs)
        task_placed.refuse_undispatchable(wf, self.host)  # placed steps with nowhere to go: refused now
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
        return Execution(self, wf, source, run, values, stack, log=log,
                         outer_stop=parent.should_stop if parent else None).go()

    def resumable(self, wf: Workflow, run: WorkflowRun, extra_inputs: dict | None = None) -> dict:
        """The inputs a suspended run would continue with; raises when it
        cannot continue (its placed steps still to run included, with no
        scheduler). Called before the run is claimed, so a refusal leaves
        it suspended."""
        _check_record_matches(wf, run)
        task_placed.refuse_undispatchable(wf, self.host, run)
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
        return Execution(self, wf, source, run, inputs, stack or ((run.workflowId, wf.name),), log=log,
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
