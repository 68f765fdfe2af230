"""Model use cases that touch the datastore: deleting a model (and its
data), and reading the records and logs of method runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from swamp.app.lifecycle import changing, reading
from swamp.app.model_definitions import validate_models
from swamp.data.records import record_json
from swamp.data.repository import DataRepository
from swamp.errors import ConflictError, NotFoundError, SwampError, UnpublishedError
from swamp.models.arguments import missing_arguments, split_inputs
from swamp.models.definitions import find_definition
from swamp.models.leases import model_lock_name
from swamp.models.outputs import find_record, iter_records, newest_record_of
from swamp.models.runner import Runner
from swamp.repo.context import config_lease
from swamp.vault.sentinel import describe_sentinels
from swamp.workflows.files import iter_workflow_files, load_workflow, workflows_using_model

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def delete(repo: Repo, name: str, *, force: bool) -> dict:
    path, d = find_definition(repo, name)
    users = workflows_using_model(repo, d.name, d.id)
    if users:
        raise ConflictError(f"model {d.name!r} is used by workflow(s) {', '.join(users)}",
                            hint="remove or change those steps first; a workflow would fail without it")
    try:
        leases = [model_lock_name(d.type, d.id)] + ([config_lease("model", d.name)] if repo.managed_config else [])
        with changing(repo, f"model delete {name}", leases=leases):
            names = _delete_definition(repo.datastore, path, d, force=force)
    except UnpublishedError as e:
        raise e.with_value({"name": name, "id": d.id, "deletedData": names})
    return {"name": name, "id": d.id, "deletedData": names}


def _record(repo: Repo, ref: str, or_model: bool):
    """A run's record by its id, or with ``or_model`` (the CLI's
    ``OUTPUT_ID_OR_MODEL``, as upstream's) the newest run of the model of
    that name. Call inside a session."""
    if not or_model:
        return find_record(repo.datastore, ref)

    return newest_record_of(repo, ref)


def output(repo: Repo, output_id: str, *, or_model: bool = False) -> dict:
    """One method run's record."""
    with reading(repo):
        _, rec = _record(repo, output_id, or_model)
    return rec.to_json()


def outputs(repo: Repo, model: str | None = None, *, method: str | None = None, status: str | None = None,
            limit: int = 50) -> list[dict]:
    """Method runs, newest first."""
    with reading(repo):
        recs = [r for _, r in iter_records(repo.datastore)
                if (not model or r.modelName == model)
                and (not method or r.methodName == method)
                and (not status or r.status == status)]
    recs.sort(key=lambda r: (r.startedAt, r.id), reverse=True)
    return [{"id": r.id, "modelName": r.modelName, "methodName": r.methodName, "status": r.status,
             "startedAt": r.startedAt, "durationMs": r.durationMs, "initiatedBy": r.initiatedBy} for r in recs[:limit]]


def output_log(repo: Repo, output_id: str, *, or_model: bool = False) -> dict:
    """One method run's log."""
    ds = repo.datastore
    with reading(repo):
        _, rec = _record(repo, output_id, or_model)
        text = ds.read_bytes(rec.logFile).decode() if rec.logFile else ""
    return {"id": rec.id, "log": text}


def output_data(repo: Repo, output_id: str, *, or_model: bool = False) -> list[dict]:
    """The data versions one method run wrote, with their metadata."""
    ds = repo.datastore
    data = DataRepository(ds)
    with reading(repo):
        _, rec = _record(repo, output_id, or_model)
        rows = []
        for a in rec.dataArtifacts:
            try:
                version = data.get(rec.modelType, rec.definitionId, a["name"], a["version"])
            except NotFoundError:  # collected since, or deleted
                rows.append({**a, "deleted": True})
                continue
            rows.append({"model": rec.modelName, **record_json(version, None)})
    return sorted(rows, key=lambda r: (r["name"], r["version"]))


def evaluate(repo: Repo, name: str, method: str | None = None, inputs: dict | None = None) -> dict:
    """The definition's arguments with their expressions resolved now, per
    method (or for one): what a run would get, vault references shown as
    the expressions that make them (secrets are resolved only when a method
    runs)."""
    runner = Runner(repo)
    runner.skip_checks = True  # evaluating runs nothing: no pre-flight check either
    _, d = find_definition(repo, name)
    model_type = runner.registry.get(d.type)
    methods = [method] if method else sorted(model_type.methods)

    out = {}
    missing: dict[str, list[str]] = {}
    with reading(repo):  # expressions may read data: what a run would see after its pull
        for m in methods:
            given = inputs if method else None
            lacking = missing_arguments(d, model_type, m, split_inputs(d, model_type, m, given)[1])
            if lacking and not method:
                missing[m] = lacking  # a run gives them (--input); the other methods still show
                continue
            prepared = runner.prepare(d, m, given)
            out[m] = json.loads(describe_sentinels(json.dumps(prepared.args.model_dump(mode="json"))))
    result = {"model": d.name, "type": d.type, "methods": out}
    if missing:
        result["missingArguments"] = missing
    return result


def validate(repo: Repo, name: str | None = None) -> dict:
    """`swamp model validate`: definitions against their types; a required
    argument that a configured method lacks counts as given when a workflow
    step running that method gives it."""
    return validate_models(repo, name, given_by_steps=_steps_giving(repo))


def _steps_giving(repo: Repo):
    """A check: does a workflow step running METHOD of this model give ARGUMENT
    in its inputs? (inputs that are one expression give them all)."""
    tasks = []
    for path in iter_workflow_files(repo):
        try:
            wf = load_workflow(path, repo.root)
        except SwampError:
            continue  # workflow validate reports it
        tasks += [s.task for job in wf.jobs for s in job.steps if s.task.type == "model_method"]

    def given(d, method: str, argument: str) -> bool:
        return any(t.methodName == method and (t.modelIdOrName or t.modelName) in (d.name, d.id)
                   and (isinstance(t.inputs, str) or argument in (t.inputs or {})) for t in tasks)

    return given


def _delete_definition(ds, path, d, *, force: bool) -> list[str]:
    """Delete definition ``d`` (at ``path``) and, with ``force``, its data;
    returns the data names it had. The caller holds the model's lease."""
    data = DataRepository(ds)
    # A name whose versions were all deleted keeps only a tombstone: no data.
    names = [n for n in data.names(d.type, d.id) if data.versions(d.type, d.id, n)]
    if names and not force:
        raise ConflictError(f"model {d.name!r} still has data ({', '.join(names)})",
                            hint="delete its data first, or pass --force to delete it too")
    data.delete_model(d.type, d.id)
    try:
        # An automatic definition, or one in the config tier (managed
        # config), lives in the datastore: its delete syncs.
        rel = path.absolute().relative_to(ds.root).as_posix()
    except ValueError:
        path.unlink()
    else:
        ds.delete(rel)
    return names
