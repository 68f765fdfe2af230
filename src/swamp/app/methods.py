"""Running one method of a model: the use case behind ``model method run``
(and, later, serve's and workers' method runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swamp.app.lifecycle import changing, is_shared
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import UnpublishedError
from swamp.models.leases import model_lock_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo

# The other imports sit in the functions that use them: `model method run` loads this module,
# and with them at the top a plain run loads pydantic (bench/startup_bench.py).


class MethodRun:
    """A finished method run: its output record (models.outputs.OutputRecord),
    and what its session moved. ``unpublished`` is set when the run is done
    here but its push failed; ``failure_log`` is the run's log, kept when the
    method failed (to show where it went wrong); ``reports`` the reports that
    ran after it (reports/run.py Outcome), when any was selected. (A plain
    class, not a dataclass: the dataclasses module imports inspect, ~4 ms of
    a command.)"""

    def __init__(self, record: Any, sync: SyncCounts, shared: bool, unpublished: UnpublishedError | None = None,
                 failure_log: str | None = None, reports: list | None = None) -> None:
        self.record = record
        self.sync = sync
        self.shared = shared
        self.unpublished = unpublished
        self.failure_log = failure_log
        self.reports = [] if reports is None else reports

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MethodRun):
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return "MethodRun(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"

    def to_json(self) -> dict:
        """The record as commands print it (without the process id), with
        what crossed the wire on a shared datastore."""
        data = self.record.to_json()
        data.pop("pid", None)
        if self.shared:
            data["sync"] = self.sync.to_json()
        if self.unpublished is not None:
            data["published"] = False
        if self.reports:
            data["reports"] = [o.to_json() for o in self.reports]
        return data


def _runner_for(repo: Repo, runner, on_log, checks):
    """A Runner with the run's pre-flight check options (``checks``: a
    (skip all, names to skip) pair, or None)."""
    from swamp.models.runner import Runner

    runner = runner or Runner(repo, on_log=on_log)
    if checks is not None:
        runner.skip_checks, runner.skip_check = bool(checks[0]), frozenset(checks[1] or ())
    return runner


def _checked_options(repo: Repo, runner, definition, model_type, method, reports):
    """Report and check options refused before any lease: an unknown
    report or check name is a clear error, not a surprise after the run."""
    from swamp.app.reports import for_method
    from swamp.models.checks import check_skips

    if runner.skip_check:
        check_skips(model_type, method, runner.skip_check)
    return for_method(repo, definition, reports)


def run_method(repo: Repo, model: str, method: str, *, inputs: dict | None = None,
               tags: dict | None = None, runner=None, on_log=None, reports=None, checks=None,
               by: str | None = None) -> MethodRun:
    """One session: the model's lease (its versions are allocated under it),
    a pull, the arguments resolved once against what the pull brought, the
    run, one push, release. ``runner`` (a models.runner.Runner) lets a caller
    that runs many methods load the type registry once."""
    return run_batch(repo, model, method, [inputs or {}], tags=tags, runner=runner, on_log=on_log,
                     reports=reports, checks=checks, by=by)[0]


def run_batch(repo: Repo, model: str, method: str, batch: list[dict], *, tags: dict | None = None,
              runner=None, on_log=None, reports=None, checks=None, by: str | None = None,
              output_id: str | None = None) -> list[MethodRun]:
    """Run ``method`` once per inputs map in ``batch``, all in one session:
    one lease, one pull, one push, so the versions they write are
    contiguous. Every inputs map is checked before the lease is taken.
    ``reports`` (a reports.run.Selection) chooses the reports that run
    after each run, in the same session; ``checks`` is (skip every
    pre-flight check, names of checks to skip); ``by`` is who runs it
    (util/actors.py; default: this process's user), its ``initiatedBy``."""
    from swamp.app.reports import after_method

    runner = _runner_for(repo, runner, on_log, checks)
    checked = [runner.check(model, method, inputs) for inputs in batch]  # bad input: refused before any lease
    definition = checked[0][0]
    report_types = _checked_options(repo, runner, definition, checked[0][1], method, reports)
    counts = SyncCounts()
    done: list[tuple] = []  # (record, failure log)
    try:
        with changing(repo, f"model method run {definition.name} {method}",
                      leases=[model_lock_name(definition.type, definition.id)], into=counts):
            for i, inputs in enumerate(batch):  # output_id: the first run's id, chosen by a detached run's starter
                record = runner.execute(runner.prepare(definition, method, inputs), tags=tags, initiated_by=by,
                                        output_id=output_id if i == 0 else None)
                done.append((record, _failure_log(repo, record), after_method(repo, runner.data, record,
                                                                              report_types)))
    except UnpublishedError as e:
        return [MethodRun(_as_stored(repo, r), counts, is_shared(repo), unpublished=e, failure_log=log, reports=rep)
                for r, log, rep in done]
    return [MethodRun(_as_stored(repo, r), counts, is_shared(repo), failure_log=log, reports=rep)
            for r, log, rep in done]


def check_runnable(repo: Repo, model: str, method: str, inputs: dict) -> None:
    """Refuse what ``run_batch`` would refuse before its lease (an unknown
    model or method, inputs that break the schema): a detached run checks
    first, so that its starter hears of it."""
    _runner_for(repo, None, None, None).check(model, method, inputs)


def _as_stored(repo: Repo, record):
    """``record`` with the data versions its stored copy names now: the
    session's pull or push may have renumbered them (a peer published that
    number first), and a caller is told what was published, never the
    number the run allocated before (its data would be another run's)."""
    if not is_shared(repo):
        return record
    from swamp.errors import SwampError
    from swamp.models.outputs import load_record, record_path

    try:
        stored = load_record(repo.datastore, record_path(record))
    except (SwampError, OSError, ValueError):
        return record  # not in the cache (taken back with a lost lease): as it ran
    record.dataArtifacts = stored.dataArtifacts
    return record


def _failure_log(repo: Repo, record) -> str | None:
    if record.status == "succeeded" or not record.logFile:
        return None
    return repo.datastore.read_bytes(record.logFile).decode("utf-8", "replace")


def run_direct(repo: Repo, type_name: str, method: str, name: str, batch: list[dict], *, tags: dict | None = None,
               on_log=None, reports=None, checks=None, by: str | None = None) -> list[MethodRun]:
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
    from swamp.app.reports import after_method
    from swamp.util.names import did_you_mean

    runner = _runner_for(repo, None, on_log, checks)
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
            return run_batch(repo, name, method, batch, tags=tags, runner=runner, on_log=on_log,
                             reports=reports, checks=checks, by=by)
    routed = [auto_definitions.route_inputs(model_type, method, inputs) for inputs in batch]
    existing = auto_definitions.find(repo, type_name, name)
    global_args: dict = {}
    for g, _ in routed:
        global_args.update(g)
    definition = auto_definitions.updated(existing, model_type, name, global_args)
    # Every run's inputs checked before the lease: a bad one writes nothing.
    checked = [runner.check(definition, method, {**g, **m}) for g, m in routed]
    report_types = _checked_options(repo, runner, definition, model_type, method, reports)
    del checked
    counts = SyncCounts()
    done: list[tuple] = []
    try:
        with changing(repo, f"model method run {type_name} {method} {name}",
                      leases=[model_lock_name(definition.type, definition.id)], into=counts):
            # the first run's arguments resolved and its pre-flight checks passed before anything is saved
            first = runner.prepare(definition, method, {**routed[0][0], **routed[0][1]})
            auto_definitions.save(repo.datastore, definition)
            for i, (g, m) in enumerate(routed):
                # this run's own global values win over those the definition keeps
                p = first if i == 0 else runner.prepare(definition, method, {**g, **m})
                record = runner.execute(p, tags=tags, initiated_by=by)
                done.append((record, _failure_log(repo, record), after_method(repo, runner.data, record,
                                                                              report_types)))
    except UnpublishedError as e:
        return [MethodRun(_as_stored(repo, r), counts, is_shared(repo), unpublished=e, failure_log=log, reports=rep)
                for r, log, rep in done]
    return [MethodRun(_as_stored(repo, r), counts, is_shared(repo), failure_log=log, reports=rep)
            for r, log, rep in done]
