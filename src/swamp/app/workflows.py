"""Workflow use cases: run, resume, approve or reject, cancel, and read runs.

A run holds its run's lease while it executes; each model_method step is
one session of its own (``_Host.step``), so a step costs one commit; the
model's lease is taken only once its method ends, to number and publish
its versions (``_Host.publishing``). The
sync counts of every session a run opened add up in its result."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swamp.app import one_lane_runs
from swamp.app.lifecycle import changing, is_shared, reading, refresh
from swamp.app.placed_steps import PlacedSteps, attached
from swamp.app.recorded_workflows import recorded_id, runs_workflow_id
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import NoDispatcherError, NotFoundError, UnpublishedError
from swamp.models.leases import model_lock_name
from swamp.repo.context import config_lease
from swamp.util.actors import local_user
from swamp.workflows import records, runs
from swamp.workflows.engine import Engine, Observer
from swamp.workflows.files import find_workflow
from swamp.workflows.placement import Placement, StepJob, StepOutcome
from swamp.workflows.records import WorkflowRun
from swamp.workflows.schema import workflow_id
from swamp.app.workflow_files import checked, fail_on_level

if TYPE_CHECKING:
    from swamp.repo.context import Repo


@dataclass
class RunResult:
    """A run as it ended (or suspended), and what its sessions moved."""

    run: WorkflowRun
    sync: SyncCounts = field(default_factory=SyncCounts)
    shared: bool = False
    #: set when the run's work is done here but its last push failed
    unpublished: UnpublishedError | None = None
    #: the reports that ran after it (reports/run.py Outcome), when any was selected
    reports: list = field(default_factory=list)


def _engine(repo: Repo, host, observer, checks, on_log=None) -> Engine:
    """The engine, its runner given the run's pre-flight check options
    (``checks``: (skip all, names to skip), or None), and ``on_log`` called
    with each line its steps' methods log (in the step's thread)."""
    engine = Engine(repo, host, observer=observer)
    engine.runner.on_log = on_log
    engine.runner.publishing = host.publishing  # the model's lease only while versions are published
    if checks is not None:
        engine.runner.skip_checks, engine.runner.skip_check = bool(checks[0]), frozenset(checks[1] or ())
    return engine


def _reported(repo: Repo, result: RunResult, report_types) -> RunResult:
    """Run the finished run's reports (docs/reports.md); their failure
    never changes the run's outcome."""
    from swamp.app.reports import after_workflow

    outcomes, unpublished = after_workflow(repo, result.run, report_types, result.sync)
    result.reports = outcomes
    if unpublished is not None:
        result.unpublished = unpublished
    return result


def _refuse_over_interrupted(ds, run: WorkflowRun) -> None:
    """Refuse to save ``run`` over a record that a peer marked interrupted
    (app/interrupted_runs.py) while it ran here: the mark stays, and the run
    is told (a ConflictError), never silently overwritten. Called under the
    run's lease, after the session's pull."""
    from swamp.app.interrupted_runs import is_marked
    from swamp.errors import ConflictError, NotFoundError, SwampError

    if is_marked(run):
        return
    try:
        stored = records.load(ds, run.workflowId, run.id)
    except NotFoundError:
        return  # a new run's first save
    except SwampError:
        return  # unreadable: the write below replaces it, as before
    if is_marked(stored):
        raise ConflictError(f"run {run.id} of {run.workflowName} was recorded interrupted while it ran here "
                            f"({stored.failureReason}); its record is left as it is",
                            hint=f"see 'swamp workflow history get {run.id}'; restart it with "
                                 f"'swamp workflow resume {run.workflowName} {run.id} --from STEP'")


@contextlib.contextmanager
def _nested(outer, inner):
    """``inner`` entered within ``outer`` (and left before it)."""
    with outer, inner:
        yield


class _Host:
    """The engine's RunHost: every session a run needs, opened here."""

    def __init__(self, repo: Repo, *, placed: PlacedSteps | None = None) -> None:
        self.repo = repo
        self.sync = SyncCounts()
        self.unpublished: UnpublishedError | None = None
        self._mutex = threading.Lock()  # steps run in threads; their counts add up here
        #: placed steps go to workers through its dispatcher (app/placed_steps.py)
        self.placed = placed or attached(repo)
        self.remote_only = self.placed.remote_only
        #: (thread, run id) -> the run's lease taken by ``claim``, held until ``holding`` ends
        self._claimed: dict[tuple[int, str], contextlib.ExitStack] = {}
        from swamp.app.publishing_leases import PublishingLeases

        #: the model leases steps' ``publishing`` takes, let go after each step's push
        self._leases = PublishingLeases(repo, self._add, session=lambda command, leases: self._session(
            command, leases=leases))
        #: a one-lane run's sessions (app/one_lane_runs.py), or None
        self.lane = None

    def _add(self, counts: SyncCounts) -> None:
        with self._mutex:
            self.sync.add(counts)

    @contextlib.contextmanager
    def _session(self, command: str, leases=()):
        """A session whose failed push does not fail the step or the run:
        the work is done here, and a later session's push publishes it (a
        push sends everything not yet published). Only when the last one
        failed too is the run reported unpublished."""
        counts = SyncCounts()
        try:
            with changing(self.repo, command, leases=leases, into=counts):
                yield
        except UnpublishedError as e:
            with self._mutex:
                self.unpublished = e
        else:
            with self._mutex:
                self.unpublished = None
        finally:
            self._add(counts)

    def can_dispatch(self) -> bool:
        return self.placed.dispatcher is not None

    def dispatch(self, job: StepJob, placement: Placement, *, cancelled, on_log, on_wait) -> StepOutcome:
        """A placed step, carried to a worker by the run's dispatcher, its
        wait for a worker bounded by --queue-timeout."""
        if self.placed.dispatcher is None:
            raise NoDispatcherError(f"the step is placed ({placement.describe()}) but no scheduler is "
                                    "configured: pass --scheduler tls://HOST:8786")
        return self.placed.dispatcher.run(job, self.placed.bounded(placement), cancelled=cancelled, on_log=on_log,
                                          on_wait=on_wait)

    @contextlib.contextmanager
    def holding(self, run: WorkflowRun):
        """The run's lease while it executes. A run this host claimed
        (``claim``) has held it since: it is let go only here, at the end."""
        claimed = self._claimed.pop((threading.get_ident(), run.id), None)
        try:
            with self.repo.datastore.lock(records.run_lock(run.id)):
                if self.lane is None:
                    yield
                else:
                    self.lane.begin(run)
                    try:
                        yield
                    finally:
                        self.lane.end()  # under the run's lease: what it parked names it
        finally:
            if claimed is not None:
                claimed.close()

    def release_claims(self) -> None:
        """Let go of the leases this thread claimed for runs that never
        started (the engine failed between the claim and the run)."""
        me = threading.get_ident()
        for key in [k for k in self._claimed if k[0] == me]:
            self._claimed.pop(key).close()

    def step(self, definition, command: str, *, cancelled: threading.Event | None = None):
        """A model_method step's session: a pull, the method, one push. The
        method runs without the model's lease: the runner stages what it
        writes, and ``publishing`` takes the lease only once it ends, held
        until this session has pushed (app/publishing_leases.py), so items
        on one model run at once and a step still costs one commit. A
        one-lane run (app/one_lane_runs.py) keeps the model's lease from one
        step to the next instead: its steps run one after another anyway;
        its wait for that lease ends when ``cancelled`` (the run's stop) is set."""
        session = lambda: _nested(self._leases.held(), self._session(command))  # noqa: E731
        if self.lane is not None and self.lane.here():
            return self.lane.step(model_lock_name(definition.type, definition.id), session, cancelled=cancelled)
        return session()

    def publishing(self, definition, command: str, *, cancelled=None):
        """Where a step's versions are numbered: the model's lease and a pull
        (its wait ended by ``cancelled``, the step's cancel event)."""
        return self._leases.publishing(definition, command, cancelled=cancelled)

    def save(self, write, command: str) -> None:
        # The run's lease is held by the thread executing the run; a save may
        # come from a step's thread, so it takes no lease of its own.
        run = getattr(getattr(write, "__self__", None), "run", None)  # the engine's RunState.write_record

        def checked_write() -> None:
            if isinstance(run, WorkflowRun):
                _refuse_over_interrupted(self.repo.datastore, run)
            write()

        if self.lane is not None and self.lane.here():
            self.lane.save(checked_write, lambda: self._session(command))  # with a parked step: one commit
            return
        with self._session(command):
            checked_write()

    def watch(self) -> None:
        if self.lane is not None and self.lane.here():
            self.lane.publish()  # a parked step waits for nothing but the run's end
        self._add(refresh(self.repo))

    def claim(self, workflow_id: str, run_id: str) -> WorkflowRun:
        """Claim a suspended run (recorded running), keeping its lease held
        until ``holding`` ends: a run recorded running with no lease held is
        what `run doctor` and serve take for an orphan."""
        lease = contextlib.ExitStack()
        lease.enter_context(self.repo.datastore.lock(records.run_lock(run_id)))
        try:
            with self._session("workflow resume", leases=[records.run_lock(run_id)]):
                claimed = runs.claim_for_resume(self.repo.datastore, workflow_id, run_id)
        except BaseException:
            lease.close()
            raise
        self._claimed[(threading.get_ident(), run_id)] = lease
        return claimed

    def settle_signal(self, run: WorkflowRun, job: str, step: str, message):
        """An expired signal wait, settled as timed out unless a signal won
        first (app/signals.py): the outcome that stands, or None."""
        from swamp.app import signals

        counts = SyncCounts()
        try:
            return signals.settle_timeout(self.repo, run, job, step, message, into=counts)
        finally:
            self._add(counts)


def run(repo: Repo, name: str, inputs: dict, *, fail_on: str | None = None,
        observer: Observer | None = None, placed: PlacedSteps | None = None,
        reports=None, checks=None, on_log=None, by: str | None = None,
        from_failed: str | None = None, run_id: str | None = None) -> RunResult:
    """``run_id``: the new run's id, chosen by the caller (a detached run's,
    printed before it starts). ``reports`` (a reports.run.Selection) chooses the reports that run
    once the run ends; ``checks`` is (skip every pre-flight check, names
    of checks to skip) for its model_method steps. ``by`` is who starts it
    (util/actors.py; default: this process's user). ``placed``: where its
    placed steps go (app/placed_steps.py; default: what the repository
    session carries, else nowhere). ``from_failed``: the id
    of a failed run of NAME to re-run from its failure (workflows/rerun.py),
    with its inputs (``inputs`` merge over them)."""
    from swamp.app.reports import for_workflow

    source, wf = checked(repo, name)
    report_types = for_workflow(repo, wf, reports)  # an unknown report: refused before the run starts
    host = _Host(repo, placed=placed)
    if is_shared(repo) and not host.remote_only and one_lane_runs.qualifies(wf):
        host.lane = one_lane_runs.OneLane(repo.datastore)
    old = None
    if from_failed:
        old = failed_run(repo, wf, from_failed, into=host.sync)
        inputs = {**(old.inputs or {}), **inputs}
    result = _engine(repo, host, observer, checks, on_log).start(wf, source, inputs, fail_on=fail_on_level(fail_on),
                                                                  by=by or local_user(), rerun_of=old, run_id=run_id)
    return _reported(repo, RunResult(result, host.sync, is_shared(repo), host.unpublished), report_types)


def failed_run(repo: Repo, wf, run_id: str, *, into=None) -> WorkflowRun:
    """The run of ``wf`` that ``--from-failed RUN_ID`` names (its id, or a
    unique start of it); a run of another workflow is not found."""
    from swamp.errors import ConflictError, NotFoundError

    wid = workflow_id(wf)
    with reading(repo, into=into):
        # only this workflow's runs are looked at: a caller allowed to run it learns nothing of others
        ids = [rid for rid in records.run_ids(repo.datastore, wid) if rid.startswith(run_id)]
        exact = [rid for rid in ids if rid == run_id]
        if len(run_id) >= 4 and (exact or len(ids) == 1):
            return records.load(repo.datastore, wid, (exact or ids)[0])
    if len(ids) > 1 and len(run_id) >= 4:
        raise ConflictError(f"{run_id!r} is the start of {len(ids)} runs of {wf.name}", hint="give more of the id")
    raise NotFoundError(f"workflow {wf.name!r} has no run {run_id!r}",
                        hint=f"list its failed runs with 'swamp workflow history search --workflow {wf.name} "
                             "--status failed'")


def resume(repo: Repo, name: str, run_id: str | None, inputs: dict, *, observer: Observer | None = None,
           from_step: str | None = None, reports=None, checks=None, on_log=None,
           by: str | None = None, placed: PlacedSteps | None = None) -> RunResult:
    """Continue a suspended run; with ``from_step``, restart a failed (or
    cancelled) run from that step: it and what depends on it run again,
    the rest keeps its outcome. ``inputs`` merge over the saved ones.
    ``by`` is who continues it (default: this process's user)."""
    from swamp.app.reports import for_workflow
    from swamp.workflows.resumptions import note_resumption

    source, wf = checked(repo, name)
    report_types = for_workflow(repo, wf, reports)
    host = _Host(repo, placed=placed)
    statuses = runs.RESTARTABLE if from_step else ("suspended",)
    with reading(repo, into=host.sync):
        target = runs.pick(repo.datastore, workflow_id(wf), run_id, statuses)
    engine = _engine(repo, host, observer, checks, on_log)
    if from_step:
        if target.status not in runs.RESTARTABLE:
            from swamp.errors import ConflictError

            raise ConflictError(f"run {target.id} is {target.status}; --from restarts a failed or cancelled run",
                                hint="a suspended run continues with 'swamp workflow resume' alone")
        probe = target.model_copy(deep=True)
        runs.reset_from(wf, probe, from_step)  # an unknown step: refused before the run is touched
        values = engine.resumable(wf, probe, inputs)
        # The run's lease is held from the claim until the run ends: a run
        # recorded running with no lease held is taken for an orphan.
        with repo.datastore.lock(records.run_lock(target.id)):
            with changing(repo, f"workflow resume {wf.name} --from {from_step}",
                          leases=[records.run_lock(target.id)], into=host.sync):
                claimed, _ = runs.claim_from(repo.datastore, wf, target.workflowId, target.id, from_step)
            note_resumption(claimed, was=target.status, from_step=from_step, by=by or local_user())
            done = engine.resume(wf, source, claimed, values, by=by or local_user())
        return _reported(repo, RunResult(done, host.sync, is_shared(repo), host.unpublished), report_types)
    values = engine.resumable(wf, target, inputs)  # a refusal leaves the run suspended
    try:
        claimed = host.claim(target.workflowId, target.id)  # its lease stays held until the run ends
        note_resumption(claimed, was=target.status, from_step=None, by=by or local_user())
        done = engine.resume(wf, source, claimed, values, by=by or local_user())
    finally:
        host.release_claims()
    return _reported(repo, RunResult(done, host.sync, is_shared(repo), host.unpublished), report_types)


def decide(repo: Repo, name: str, step: str, decision: str, run_id: str | None, reason: str | None,
           *, by: str | None = None) -> dict:
    """Record ``approved`` or ``rejected`` for a step waiting for approval
    (in the run, or in a suspended nested run it started), under the lease
    of the run that owns the step, as decided by ``by`` (default: this
    process's user)."""
    _, wf = find_workflow(repo, name)
    ds = repo.datastore
    with reading(repo):
        from swamp.app.approvals import waiting_run  # several runs waiting and no run_id: refused

        run = waiting_run(ds, workflow_id(wf), wf.name, step, run_id, "approve" if decision == "approved" else "reject")
        owner, job_name, step_name = runs.find_waiting(ds, run, step)
    try:
        with changing(repo, f"workflow {decision}", leases=[records.run_lock(owner.id)]):
            s = runs.record_decision(ds, owner, job_name, step_name, decision, reason, by)
    except UnpublishedError as e:
        raise e.with_value(_decision(run, owner, job_name, step_name, decision, reason, s))
    return _decision(run, owner, job_name, step_name, decision, reason, s)


def _decision(run, owner, job_name, step_name, decision, reason, s) -> dict:
    out = {"runId": run.id, "workflowName": run.workflowName, "job": job_name, "step": step_name,
           "decision": decision, "decidedBy": s.approval.decidedBy, "decidedAt": s.approval.decidedAt}
    if owner.id != run.id:
        out["nestedRunId"] = owner.id
    if reason:
        out["reason"] = reason
    return out


def cancel(repo: Repo, name: str, run_id: str | None, *, by: str | None = None) -> dict:
    """Cancel a run as ``by`` (util/actors.py; default: this process's
    user), recorded as its ``cancelledBy``."""
    _, wf = find_workflow(repo, name)
    with reading(repo):
        run = runs.pick(repo.datastore, workflow_id(wf), run_id, ("running", "suspended", "pending"))
    return _cancel(repo, run, by or local_user())


def _cancel(repo: Repo, run: WorkflowRun, by: str) -> dict:
    """Cancel a suspended run at once (with the nested runs it waits on);
    ask a running one to stop (or cancel it at once when its process is
    gone): its engine sees the request within about a second (``_Host.watch``,
    also while a step runs), stops the processes of its steps in flight
    (local ones through swamp.util.processes, placed ones on their
    workers), publishes nothing of them and records the run cancelled."""
    ds = repo.datastore
    if runs.cancel_in_flight(run):
        out = {"id": run.id, "workflowName": run.workflowName, "status": run.status, "cancelRequested": True}
        try:
            with changing(repo, "workflow cancel"):
                runs.request_cancel(ds, run, by)
        except UnpublishedError as e:
            raise e.with_value(out)  # the running process cannot see the request until it is published
        return out
    try:
        with changing(repo, "workflow cancel", leases=[records.run_lock(run.id)]):
            fresh = runs.cancel_now(ds, run.workflowId, run.id, by)
    except UnpublishedError as e:
        raise e.with_value({"id": run.id, "workflowName": run.workflowName, "status": "cancelled",
                            "cancelRequested": False})
    for child in runs.suspended_children(ds, fresh):
        _cancel(repo, child, by)
    return {"id": fresh.id, "workflowName": fresh.workflowName, "status": fresh.status, "cancelRequested": False}


def history(repo: Repo, name: str, limit: int | None = None) -> list[dict]:
    with reading(repo):
        found = records.history(repo.datastore, runs_workflow_id(repo, name))
    rows = []
    for r in found[:limit] if limit else found:
        steps = [s for _, s in r.steps()]
        rows.append({"id": r.id, "workflowName": r.workflowName, "status": r.status, "startedAt": r.startedAt,
                     "completedAt": r.completedAt, "durationMs": r.durationMs,
                     "steps": len(steps), "failedSteps": sum(s.status == "failed" for s in steps),
                     "initiatedBy": r.initiatedBy})
    return rows


def get_run(repo: Repo, name: str, run_id: str | None) -> WorkflowRun:
    ds = repo.datastore
    with reading(repo):
        wid = runs_workflow_id(repo, name)
        if run_id:
            return records.load(ds, wid, run_id)
        return records.latest(ds, wid)


def logs(repo: Repo, name: str, run_id: str | None) -> dict:
    run = get_run(repo, name, run_id)
    return {"id": run.id, "workflowName": run.workflowName, "status": run.status,
            "log": records.read_log(repo.datastore, run.workflowId, run.id)}


def evaluate(repo: Repo, name: str, inputs: dict) -> dict:
    from swamp.workflows.evaluate import evaluate_workflow

    from swamp.workflows.files import shown_path

    path, wf = find_workflow(repo, name)
    rel = shown_path(repo, path)
    with reading(repo):  # expressions read data: pull once first
        doc = evaluate_workflow(repo, wf, rel, inputs)
    return {**doc, "path": rel}


def _row(r: WorkflowRun) -> dict:
    steps = [s for _, s in r.steps()]
    return {"id": r.id, "workflowName": r.workflowName, "status": r.status, "startedAt": r.startedAt,
            "completedAt": r.completedAt, "durationMs": r.durationMs,
            "steps": len(steps), "failedSteps": sum(s.status == "failed" for s in steps),
            "initiatedBy": r.initiatedBy}


def search_runs(repo: Repo, *, workflow: str | None = None, status: str | None = None,
                limit: int | None = None, query: str | None = None) -> list[dict]:
    """Runs of every workflow (or one), newest first. ``query`` keeps runs
    whose id starts with it or whose workflow's name contains it."""
    with reading(repo):
        wid = runs_workflow_id(repo, workflow) if workflow else None
        found = records.all_runs(repo.datastore)
    q = (query or "").lower()
    rows = [_row(r) for r in found if (wid is None or r.workflowId == wid) and (not status or r.status == status)
            and (not q or r.id.lower().startswith(q) or q in r.workflowName.lower())]
    return rows[:limit] if limit else rows


def _workflow_named(repo: Repo, ref: str):
    """The workflow whose file is named ``ref``, or None (no file read but its own)."""
    from swamp.util.names import is_workflow_name
    from swamp.workflows.files import workflow_path

    from swamp.extensions.workflows import find as in_extension

    if not is_workflow_name(ref) or not (workflow_path(repo, ref).is_file() or in_extension(repo, ref)):
        return None
    return find_workflow(repo, ref)[1]


def _find_run(repo: Repo, ref: str, or_workflow: bool) -> WorkflowRun:
    """A run by its id, or with ``or_workflow`` (upstream's
    RUN_ID_OR_WORKFLOW) a workflow's name for its newest run. Call inside
    a session."""
    wf = _workflow_named(repo, ref) if or_workflow else None
    if wf is not None:
        return records.latest(repo.datastore, workflow_id(wf))
    try:
        return records.find_run(repo.datastore, ref)
    except NotFoundError:
        wid = recorded_id(repo, ref) if or_workflow else None  # a name only another peer has a file of
        if wid is None:
            raise
        return records.latest(repo.datastore, wid)


def run_by_id(repo: Repo, run_id: str, *, or_workflow: bool = False) -> WorkflowRun:
    with reading(repo):
        return _find_run(repo, run_id, or_workflow)


def run_log_by_id(repo: Repo, run_id: str, *, or_workflow: bool = False) -> dict:
    with reading(repo):
        run = _find_run(repo, run_id, or_workflow)
        log = records.read_log(repo.datastore, run.workflowId, run.id)
    return {"id": run.id, "workflowName": run.workflowName, "status": run.status, "log": log}


def approvals(repo: Repo, name: str | None = None) -> list[dict]:
    """What suspended runs wait for: each approval, its prompt, since when."""
    ds = repo.datastore
    out = []
    with reading(repo):
        wid = runs_workflow_id(repo, name) if name else None
        for run in records.all_runs(ds):
            if run.status != "suspended" or (wid and run.workflowId != wid) or run.parentRunId:
                continue
            for owner, j, s in runs.waiting_steps(ds, run):
                out.append({"workflowName": run.workflowName, "runId": run.id, "job": j.name, "step": s.name,
                            "prompt": s.approval.prompt, "requestedAt": s.approval.requestedAt,
                            "timeoutSeconds": s.approval.timeoutSeconds,
                            **({"nestedRunId": owner.id} if owner.id != run.id else {})})
    return sorted(out, key=lambda a: (a["requestedAt"], a["runId"], a["job"], a["step"]))


def delete(repo: Repo, name: str, *, force: bool = False) -> dict:
    """Delete a workflow file and its run records. Refused while a run of it
    is running or waiting (suspended), unless ``force``."""
    from swamp.errors import ConflictError

    from swamp.workflows.files import shipped_by_extension

    path, wf = find_workflow(repo, name)
    if shipped_by_extension(repo, path):
        raise ConflictError(f"workflow {wf.name!r} is shipped by an extension ({path}); it is not deleted here",
                            hint="remove the extension ('swamp extension rm NAME'), or copy the workflow into "
                                 "workflows/ to change it")
    wid = workflow_id(wf)
    ds = repo.datastore
    with reading(repo):
        found = records.history(ds, wid)
    busy = [r for r in found if r.status in ("running", "pending", "suspended")]
    if busy and not force:
        raise ConflictError(f"workflow {wf.name!r} has {len(busy)} run(s) running or waiting: "
                            + ", ".join(r.id for r in busy[:5]),
                            hint="let them finish or cancel them, or pass --force")
    value = {"name": wf.name, "id": wid, "path": str(path.relative_to(repo.root)), "deletedRuns": len(found)}
    try:
        with changing(repo, f"workflow delete {wf.name}",
                      leases=[config_lease("workflow", wf.name)] if repo.managed_config else []):
            ds.delete(records.run_dir(wid))
            repo.remove_config(path)  # in the repository, or the datastore's config tier
    except UnpublishedError as e:
        raise e.with_value(value)
    return value
