"""Running one method of a model: the use case behind ``model method run``
(and, later, serve's and workers' method runs)."""

from __future__ import annotations

from dataclasses import dataclass

from swamp.app.lifecycle import changing, is_shared
from swamp.datastore.sync.counts import SyncCounts
from swamp.models.leases import model_lock_name


@dataclass
class MethodRun:
    """A finished method run: its output record, and what its session moved."""

    record: object  # models.outputs.OutputRecord
    sync: SyncCounts
    shared: bool


def run_method(repo, model: str, method: str, *, inputs: dict | None = None,
               tags: dict | None = None, runner=None) -> MethodRun:
    """One session: the model's lease (its versions are allocated under it),
    a pull, the arguments resolved once against what the pull brought, the
    run, one push, release. ``runner`` (a models.runner.Runner) lets a caller
    that runs many methods load the type registry once."""
    from swamp.models.runner import Runner

    runner = runner or Runner(repo)
    definition, _ = runner.check(model, method, inputs)  # bad input: refused before any lease
    with changing(repo, f"model method run {definition.name} {method}",
                  leases=[model_lock_name(definition.type, definition.id)]) as counts:
        prepared = runner.prepare(definition, method, inputs)
        record = runner.execute(prepared, tags=tags)
    return MethodRun(record, counts, is_shared(repo))
