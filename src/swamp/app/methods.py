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


def run_direct(repo, type_name: str, method: str, name: str, batch: list[dict], *, tags: dict | None = None,
               on_log=None) -> list[MethodRun]:
    """Direct type execution: run ``method`` of the type ``type_name`` as
    the model ``name`` without a hand-written definition. Each input naming
    one of the method's own arguments goes to the method (it wins when the
    global arguments declare it too); one naming only a global argument
    goes into the automatic definition, which is kept (in the datastore)
    with the values of its latest run. A hand-written definition of that
    name runs as itself when it is of the same type."""
    from swamp.errors import ConflictError, NotFoundError
    from swamp.models import auto_definitions
    from swamp.models.definition_files import iter_definition_files, read_ref
    from swamp.models.runner import Runner
    from swamp.util.names import did_you_mean

    runner = Runner(repo, on_log=on_log)
    model_type = runner.registry.get(type_name)
    if method not in model_type.methods:
        raise NotFoundError(f"model type {type_name!r} has no method {method!r}",
                            hint=did_you_mean(method, model_type.methods)
                            or f"methods: {', '.join(sorted(model_type.methods))}")
    for path in iter_definition_files(repo):
        if path.stem == name:
            own = read_ref(path)
            if own.type != type_name:
                raise ConflictError(f"model {name!r} is a {own.type}, not a {type_name}",
                                    hint="choose another name, or run it as 'swamp model method run "
                                         f"{name} {method}'")
            return run_batch(repo, name, method, batch, tags=tags, runner=runner, on_log=on_log)
    routed = [auto_definitions.route_inputs(model_type, method, inputs) for inputs in batch]
    existing = auto_definitions.find(repo, type_name, name)
    global_args: dict = {}
    for g, _ in routed:
        global_args.update(g)
    definition = auto_definitions.updated(existing, model_type, name, global_args)
    # Every run's inputs checked before the lease: a bad one writes nothing.
    checked = [runner.check(definition, method, {**g, **m}) for g, m in routed]
    del checked
    counts = SyncCounts()
    done: list[tuple] = []
    try:
        with changing(repo, f"model method run {type_name} {method} {name}",
                      leases=[model_lock_name(definition.type, definition.id)], into=counts):
            auto_definitions.save(repo.datastore, definition)
            for g, m in routed:
                # this run's own global values win over those the definition keeps
                record = runner.execute(runner.prepare(definition, method, {**g, **m}), tags=tags)
                done.append((record, _failure_log(repo, record)))
    except UnpublishedError as e:
        return [MethodRun(r, counts, is_shared(repo), unpublished=e, failure_log=log) for r, log in done]
    return [MethodRun(r, counts, is_shared(repo), failure_log=log) for r, log in done]
