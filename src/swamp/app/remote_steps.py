"""Steps that run on workers: the two use cases behind ``placement``.

On the dispatching side, a workflow run's engine builds a placed
model_method step's StepJob itself and hands it to its host, which sends
it with the run's ``Dispatcher`` (app/placed_steps.py; swamp.workers.dispatch
on Dask) instead of running it here (workflows/task_placed.py); the run
record, kept under the run's lease here, says which worker ran it.
``run_method`` is ``model method run --placement``. On the worker (``run_step``), the step is
one session exactly as a local step is: a pull, the arguments resolved
once, the method, then the model's lease and a pull to number its
versions, one push, release (app/publishing_leases.py). So data written on
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

from swamp.app.lifecycle import changing
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import SwampError, UnpublishedError
from swamp.models.leases import model_lock_name
from swamp.util import tracing
from swamp.util.actors import local_user
from swamp.workflows.placement import Placement, StepJob, StepOutcome, refuse_sentinels, secrets_for


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

    from swamp.app.publishing_leases import PublishingLeases

    # The model's lease only once the method has ended, to number and publish its versions,
    # held until this session's push (app/publishing_leases.py); a type run directly keeps its
    # definition under it, as before, so that one takes it from the start.
    leases = PublishingLeases(view, counts.add)
    runner.publishing = leases.publishing
    try:
        with tracing.attached(job.traceparent), leases.held(), \
                changing(view, job.command, leases=[model_lock_name(definition.type, definition.id)] if job.auto
                         else [], into=counts):
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
                       counts.to_json(), unpublished, ephemeral=_redacted(ephemeral), stderr_tail=record.stderrTail)


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


# ------------------------------------------- model method run --placement
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
    refuse_sentinels(inputs)
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
