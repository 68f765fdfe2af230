"""Steps that run on workers: the two use cases behind ``placement``.

On the dispatching side (``dispatch``), a workflow run hands a placed
model_method step to a ``Dispatcher`` (swamp.workers.dispatch, on Dask)
instead of running it here; the run record, kept under the run's lease
here, says which worker ran it. On the worker (``run_step``), the step is
one session exactly as a local step is: the model's lease, a pull, the
arguments resolved once, the method, one push, release. So data written on
a worker is versioned, leased and published as it would be locally; the
worker only never touches the run record, whose lease it does not hold.

Secrets: a worker holds no vault key. The dispatching side finds the
vault references the step's arguments make, resolves them, and sends the
values with that step only (sealed to the fitting workers' keys on the way,
swamp.workers.sealed); the worker's vault lookups answer from them for that
step and nothing is written to disk.

Cancel: a cancelled run cancels its placed steps' Dask futures; on the
worker the step's processes are killed (swamp.workers.steps) and what it
wrote is dropped before its push, so nothing of it is published; the
run records the step failed with "cancelled". When the dispatching process
dies, the scheduler releases its futures: its running steps are cancelled
the same way (the run itself is recorded interrupted by a peer, as a local
run whose process died). Logs: each line the step logs on the worker
reaches the run's log and its observer while the step runs. Ephemeral
data: a placed step gets the run's ephemeral data of its model and sends
back what it leaves there, in memory, redacted; never written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from swamp.app.lifecycle import changing
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import SwampError, UnpublishedError, ValidationError
from swamp.models.leases import model_lock_name
from swamp.util import tracing
from swamp.util.actors import local_user


@dataclass(frozen=True)
class Placement:
    """Where a step may run: workers carrying every label, or the named one;
    how long to wait for such a worker to be connected."""

    labels: dict[str, str] = field(default_factory=dict)
    target: str | None = None
    queue_timeout: float | None = None

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in sorted(self.labels.items())]
        if self.target:
            parts.append(f"worker {self.target}")
        return ", ".join(parts) or "any worker"


@dataclass
class StepJob:
    """What a worker needs to run one step, and nothing more."""

    definition: Any  # models.definitions.Definition
    method: str
    inputs: dict
    command: str
    variables: dict = field(default_factory=dict)
    #: (vault, key) -> value, for this step only; never written on the worker
    secrets: dict = field(default_factory=dict)
    #: the secrets sealed to the workers that may run the step, in their place on the way (workers/sealed.py)
    sealed_secrets: dict | None = None
    overrides: dict = field(default_factory=dict)
    #: a type run directly: its automatic definition is saved in the step's session
    auto: bool = False
    tags: dict | None = None
    triggered_by: str = "workflow"
    #: who the step runs for (util/actors.py), decided where it was dispatched, not on the worker
    initiated_by: str | None = None
    workflow_run_id: str | None = None
    workflow_name: str | None = None
    step_name: str | None = None
    #: the dispatching step's span (W3C), so the worker's spans join its trace
    traceparent: str | None = None
    #: the Dask event topic the worker sends the step's log lines to (set by the dispatcher)
    log_topic: str | None = None
    #: the run's ephemeral data of this model, {(model id, name): entry}: the step reads it
    ephemeral: dict = field(default_factory=dict)
    #: an attempt that is tried again when it fails: then what it wrote is not published (workflows/retries.py)
    discard_failed: bool = False

    def __repr__(self) -> str:  # never the secrets, should a log print the job
        return f"StepJob({self.command!r}, secrets={len(self.secrets)})"


@dataclass
class StepOutcome:
    """What a worker reports back: its name, the output record's gist, and
    what its session moved."""

    worker: str
    output_id: str | None
    status: str
    error: str | None
    data_artifacts: list = field(default_factory=list)
    sync: dict = field(default_factory=dict)
    #: set when the step ran but the worker's push failed (its next session publishes it)
    unpublished: str | None = None
    #: the model's ephemeral data after the step ({(model id, name): entry}), redacted; never written
    ephemeral: dict | None = None


class Dispatcher(Protocol):
    """Runs a StepJob on a worker that fits the placement and returns its
    outcome; raises WorkerLostError or NoWorkerError (swamp.workers.dispatch)."""

    def run(self, job: StepJob, placement: Placement, *, cancelled=None, on_log=None) -> StepOutcome:
        """``cancelled()`` true: cancel the step on its worker and raise
        StepCancelledError. ``on_log(line)``: each line the step logs, as
        it logs it."""


_defaults: dict = {"dispatcher": None, "remote_only": False}


def use(dispatcher, *, remote_only: bool = False) -> None:
    """The dispatcher (and --remote-only) of every run this process starts
    without its own: a long-running entry point (``swamp serve
    --scheduler``) sets it once."""
    _defaults.update(dispatcher=dispatcher, remote_only=remote_only)


def defaults() -> tuple:
    return _defaults["dispatcher"], _defaults["remote_only"]


# ------------------------------------------------------------- worker side
class _StepRepo:
    """The worker's repository seen by one step: the same datastore and
    checkout, with the secrets sent for this step as its only vault."""

    def __init__(self, repo, secrets: dict) -> None:
        self._repo = repo
        self.given_secrets = dict(secrets)

    def __getattr__(self, name: str):
        return getattr(self._repo, name)


def run_step(repo, job: StepJob, *, worker: str, registry=None, control=None) -> StepOutcome:
    """On a worker: one session for one step, like a local step's.
    ``control`` (swamp.workers.steps.StepControl) streams its log lines and
    says whether it was cancelled: then what it wrote is dropped before the
    push, and the outcome is ``cancelled``."""
    from swamp.models.runner import Runner

    view = _StepRepo(repo, job.secrets)
    runner = Runner(view, registry=registry, on_log=control.log if control is not None else None)
    definition = job.definition
    counts = SyncCounts()
    record = None
    unpublished = None
    ephemeral = dict(job.ephemeral)

    def cancelled() -> bool:
        return control is not None and control.cancelled.is_set()

    try:
        with tracing.attached(job.traceparent), \
                changing(view, job.command, leases=[model_lock_name(definition.type, definition.id)], into=counts):
            if job.auto:
                from swamp.models import auto_definitions

                auto_definitions.save(repo.datastore, definition)
            prepared = runner.prepare(definition, job.method, job.inputs, variables=job.variables)
            if not cancelled():
                record = runner.execute(prepared, tags=job.tags, triggered_by=job.triggered_by,
                                        initiated_by=job.initiated_by,
                                        workflow_run_id=job.workflow_run_id, workflow_name=job.workflow_name,
                                        step_name=job.step_name, overrides=job.overrides, ephemeral=ephemeral,
                                        discard_failed=job.discard_failed)
            if cancelled():
                if record is not None:
                    _drop(repo.datastore, record)  # before the push: nothing of it is published
                record = None
    except UnpublishedError as e:
        unpublished = e.message
    except SwampError as e:
        if record is None:
            return StepOutcome(worker, None, "cancelled" if cancelled() else "failed", e.message,
                               sync=counts.to_json())
        raise
    finally:
        view.given_secrets.clear()  # the values live no longer than the step
        job.secrets.clear()
    if record is None:
        return StepOutcome(worker, None, "cancelled", "cancelled on the worker; nothing it wrote was published",
                           sync=counts.to_json())
    return StepOutcome(worker, record.id, record.status, record.error, list(record.dataArtifacts),
                       counts.to_json(), unpublished, ephemeral=_redacted(ephemeral))


def _drop(ds, record) -> None:
    """Remove what a cancelled step wrote in its session (its data versions
    and its output record), which was never pushed."""
    from swamp.data import layout
    from swamp.models.outputs import record_path

    for a in record.dataArtifacts:
        if int(a.get("version") or 0) > 0:
            ds.delete(layout.version_dir(record.modelType, record.definitionId, a["name"], a["version"]))
    path = record_path(record)
    for p in (path, path[: -len(".yaml")] + ".log"):
        ds.delete(p)


def _redacted(value):
    """``value`` with every secret this process knows masked in its strings."""
    from swamp.vault.redact import redact_text

    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redacted(v) for v in value)
    return value


# -------------------------------------------------------- dispatching side
def placement_of(step, execution, where: str, item) -> Placement | None:
    """The step's placement, its labels and target rendered for this item
    (``region: ${{ self.site }}`` places each forEach item by its own)."""
    p = getattr(step, "placement", None)
    if p is None:
        return None
    labels = execution.scope.render(dict(p.labels or {}), f"{where}.placement.labels", item) or {}
    target = execution.scope.render(p.target, f"{where}.placement.target", item) if p.target else None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValidationError("placement.labels must give a map of strings")
    if target is not None and not isinstance(target, str):
        raise ValidationError("placement.target must give a string")
    return Placement(labels=labels, target=target, queue_timeout=p.queueTimeout)


def secrets_for(repo, prepared) -> dict:
    """The values of the vault references the prepared arguments make
    (those the type resolves itself included: it resolves them on the worker)."""
    from swamp.vault.sentinel import find_sentinels
    from swamp.vault.service import RepoVaults

    found = find_sentinels(prepared.args.model_dump())
    vaults = RepoVaults(repo)
    return {(v, k): vaults.get(v, k) for v, k in found}


def _no_sentinels(inputs: dict) -> None:
    from swamp.vault.sentinel import find_sentinels

    if find_sentinels(inputs):
        raise ValidationError("a placed step's inputs cannot carry vault references",
                              hint="reference the secret in the model's arguments (vault.get there); "
                                   "the worker resolves it with the value sent for the step")


def dispatch(host, execution, st, step, e, where: str, item, definition, command: str) -> bool:
    """Called by the engine for each model_method step. False: run it here.
    True: it was handled (run on a worker, or failed), its record updated."""
    if getattr(step, "placement", None) is None and not host.remote_only:
        return False
    try:
        placement = placement_of(step, execution, where, item)
    except SwampError as err:
        execution.set_failed(st, e, err.message, step)
        return True
    if placement is None:
        execution.set_failed(st, e, "the step has no placement, and this run is --remote-only", step)
        return True
    if host.dispatcher is None:
        execution.set_failed(st, e, f"the step is placed ({placement.describe()}) but no scheduler is "
                                    "configured: pass --scheduler tls://HOST:8786", step)
        return True
    try:
        prepared = execution.prepare_method(step, e, where, item, definition)  # here too: fail before dispatch
        overrides = execution.data_overrides(step, prepared)
        inputs = execution.scope.render(step.task.inputs, f"{where}.task.inputs", item) or {}
        _no_sentinels(inputs)
        with execution.lock:
            ephemeral = {k: v for k, v in execution.ephemeral.items() if k[0] == definition.id}
        job = StepJob(definition=definition, method=prepared.method, inputs=inputs, command=command,
                      variables={"run": execution.run_info}, secrets=secrets_for(host.repo, prepared),
                      overrides=overrides, auto=definition.id in execution.autos,
                      workflow_run_id=execution.run.id, workflow_name=execution.run.workflowName,
                      initiated_by=execution.acting_for(), step_name=e.name, traceparent=tracing.child_env().get("TRACEPARENT"), ephemeral=ephemeral,
                      discard_failed=not execution.final_attempt(e))
    except SwampError as err:
        execution.set_failed(st, e, err.message, step)
        return True
    execution.set_running(st, e)
    label = f"{st.record.name}/{e.name}"
    execution.log(f"step {label}: dispatched ({placement.describe()})")
    from swamp.workflows.retries import policy_for, timed_out

    timeout = policy_for(execution.wf, step).timeout
    live = _Live(execution, st, e, timeout)
    try:
        outcome = host.dispatcher.run(job, placement, cancelled=live.cancelled, on_log=live.line)
    except SwampError as err:  # StepCancelledError, WorkerLostError, NoWorkerError, ...
        if live.timed_out:  # stopped on its worker for running out of time: an attempt that failed
            execution.method_ended(st, step, e, "failed", timed_out(timeout))
        else:
            execution.set_failed(st, e, err.message, step)
        return True
    except BaseException:  # Ctrl-C: the dispatcher cancelled the step on its worker
        execution.set_failed(st, e, "cancelled: the run was interrupted; the step was stopped on its worker "
                                    "and nothing it wrote was published", step, save=False)
        raise
    finally:
        job.secrets.clear()
    with execution.lock:
        e.worker = outcome.worker
        e.outputId = outcome.output_id
        e.dataArtifacts = list(outcome.data_artifacts)
        if outcome.ephemeral is not None:  # what the step left in its model's ephemeral data
            for key in [k for k in execution.ephemeral if k[0] == definition.id and k not in outcome.ephemeral]:
                execution.ephemeral.pop(key)
            execution.ephemeral.update(outcome.ephemeral)
    execution.log(f"step {label}: ran on worker {outcome.worker}")
    execution.method_ended(st, step, e, outcome.status, outcome.error, save=False)
    # Bring in what the worker pushed before later steps evaluate anything;
    # the record follows at the run's usual pace (and always at its end).
    host.watch()
    execution.scope.data_changed()
    execution.flush()
    return True


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

    def __init__(self, execution, st, e, timeout: float | None = None) -> None:
        import threading
        import time

        self._time = time.monotonic
        self.execution, self.st, self.e = execution, st, e
        #: the step's timeout (workflows/retries.py): past it, the dispatcher is told to cancel it
        self._deadline = None if timeout is None else self._time() + timeout
        self.timed_out = False
        self._mutex = threading.Lock()
        self._lines = 0
        self._unsaved = False
        self._saved = self._time()

    def line(self, line: str) -> None:
        """Called on the Dask client's thread: cheap, never raises."""
        try:
            with self._mutex:
                self._lines += 1
                if self._lines > self.MAX_LINES:
                    return
                self._unsaved = True
            from swamp.vault.redact import redact_text

            line = redact_text(line)  # the worker masked it; this process may know more secrets (its own env's)
            ex = self.execution
            ex.log(f"step {self.st.record.name}/{self.e.name}: | {line}")
            hook = getattr(ex.engine.observer, "step_log", None)
            if hook is not None:
                hook(ex.run, self.st.record, self.e, line)
        except Exception:  # noqa: BLE001 - a line that cannot be shown never fails the step
            pass

    def cancelled(self) -> bool:
        """Polled by the dispatcher while the step runs (its thread)."""
        ex = self.execution
        with self._mutex:
            save = self._unsaved and self._time() - self._saved >= self.LOG_SAVE_INTERVAL
            if save:
                self._unsaved, self._saved = False, self._time()
        if self._deadline is not None and self._time() >= self._deadline:
            self.timed_out = True
            return True
        try:
            if save:
                ex.flush(force=True)
            return ex.stop.is_set() or ex.should_stop()
        except Exception:  # noqa: BLE001 - a failed save or pull is retried at the next look
            return ex.stop.is_set()


def run_method(repo, model: str, method: str, *, inputs: dict | None, placement: Placement, dispatcher,
               tags: dict | None = None, on_log=None):
    """``model method run --placement``: the method runs on a worker that
    fits, as one session there; here, the model and inputs are checked
    first, and the output record is read back after one pull. ``on_log``
    gets each line the method logs, as it logs it. Returns an
    app.methods.MethodRun, whose ``worker`` says where it ran."""
    from swamp.app.lifecycle import is_shared, reading
    from swamp.app.methods import MethodRun, _failure_log  # the record read as a local run's
    from swamp.models.outputs import find_record
    from swamp.models.runner import Runner

    inputs = dict(inputs or {})
    _no_sentinels(inputs)
    runner = Runner(repo)
    definition, _ = runner.check(model, method, inputs)  # refused before anything is sent
    counts = SyncCounts()
    with reading(repo, into=counts):
        prepared = runner.prepare(definition, method, inputs)
    job = StepJob(definition=definition, method=method, inputs=inputs,
                  command=f"model method run {definition.name} {method}", secrets=secrets_for(repo, prepared),
                  tags=tags, triggered_by="manual", initiated_by=local_user())
    try:
        outcome = dispatcher.run(job, placement, on_log=on_log)
    finally:
        job.secrets.clear()
    if outcome.output_id is None:  # it never ran: its session could not start
        raise SwampError(f"{definition.name}.{method} on worker {outcome.worker}: {outcome.error}")
    with reading(repo, into=counts):
        _, record = find_record(repo.datastore, outcome.output_id)
        log = _failure_log(repo, record)
    return _PlacedRun(MethodRun(record, counts, is_shared(repo), failure_log=log), outcome.worker)


class _PlacedRun:
    """A method run as ``model method run`` shows it, plus where it ran."""

    def __init__(self, run, worker: str) -> None:
        self._run = run
        self.worker = worker

    def __getattr__(self, name: str):
        return getattr(self._run, name)

    def to_json(self) -> dict:
        return {**self._run.to_json(), "worker": self.worker}
