"""Running one method of a model: the use case behind ``model method run``
(and, later, serve's and workers' method runs)."""

from __future__ import annotations

from dataclasses import dataclass

from swamp.app.lifecycle import changing, is_shared
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import UnpublishedError
from swamp.models.leases import model_lock_name


@dataclass
class MethodRun:
    """A finished method run: its output record, and what its session moved.
    ``unpublished`` is set when the run is done here but its push failed."""

    record: object  # models.outputs.OutputRecord
    sync: SyncCounts
    shared: bool
    unpublished: UnpublishedError | None = None
    #: the run's log, kept when the method failed (to show where it went wrong)
    failure_log: str | None = None

    def to_json(self) -> dict:
        """The record as commands print it (without the process id), with
        what crossed the wire on a shared datastore."""
        data = self.record.to_json()
        data.pop("pid", None)
        if self.shared:
            data["sync"] = self.sync.to_json()
        if self.unpublished is not None:
            data["published"] = False
        return data


def run_method(repo, model: str, method: str, *, inputs: dict | None = None,
               tags: dict | None = None, runner=None, on_log=None) -> MethodRun:
    """One session: the model's lease (its versions are allocated under it),
    a pull, the arguments resolved once against what the pull brought, the
    run, one push, release. ``runner`` (a models.runner.Runner) lets a caller
    that runs many methods load the type registry once."""
    return run_batch(repo, model, method, [inputs or {}], tags=tags, runner=runner, on_log=on_log)[0]


def run_batch(repo, model: str, method: str, batch: list[dict], *, tags: dict | None = None,
              runner=None, on_log=None) -> list[MethodRun]:
    """Run ``method`` once per inputs map in ``batch``, all in one session:
    one lease, one pull, one push, so the versions they write are
    contiguous. Every inputs map is checked before the lease is taken."""
    from swamp.models.runner import Runner

    runner = runner or Runner(repo, on_log=on_log)
    checked = [runner.check(model, method, inputs) for inputs in batch]  # bad input: refused before any lease
    definition = checked[0][0]
    counts = SyncCounts()
    done: list[tuple] = []  # (record, failure log)
    try:
        with changing(repo, f"model method run {definition.name} {method}",
                      leases=[model_lock_name(definition.type, definition.id)], into=counts):
            for inputs in batch:
                record = runner.execute(runner.prepare(definition, method, inputs), tags=tags)
                done.append((record, _failure_log(repo, record)))
    except UnpublishedError as e:
        return [MethodRun(r, counts, is_shared(repo), unpublished=e, failure_log=log) for r, log in done]
    return [MethodRun(r, counts, is_shared(repo), failure_log=log) for r, log in done]


def _failure_log(repo, record) -> str | None:
    if record.status == "succeeded" or not record.logFile:
        return None
    return repo.datastore.read_bytes(record.logFile).decode("utf-8", "replace")
