"""Data use cases: read versions, list, search and query them, delete them,
and collect what their lifetimes and policies let go.

Reads pull first (``reading``); a delete holds the model's lease, because a
delete of the highest version leaves a tombstone that version allocation
reads (``changing``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from swamp.app.lifecycle import changing, reading
from swamp.data import layout as data_layout
from swamp.data.records import record_json
from swamp.data.repository import DataRepository
from swamp.data.walk import iter_models
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import NotFoundError, UnpublishedError
from swamp.models.definition_files import names_by_id
from swamp.models.definition_lookup import find_ref
from swamp.models.leases import model_lock_name
from swamp.util import clock

if TYPE_CHECKING:
    from swamp.repo.context import Repo

# The other imports sit in the functions that use them: `data get` and `data list` load this
# module, and with them at the top those commands load pydantic and the workflow schema
# (bench/startup_bench.py).


def _definition(repo: Repo, model: str):
    return find_ref(repo, model)


def _reader(repo: Repo, model: str):
    """For reads: a model, or a workflow whose reports are data (data_owners)."""
    from swamp.app.data_owners import owner

    return owner(repo, model)


def get(repo: Repo, model: str, name: str, version: int | None, *, content: bool = True,
        workflow: str | None = None) -> dict:
    """One version of a model's data: ``version``, or the highest; with
    ``workflow`` (a workflow's name, or a run id or its start), the highest
    one that workflow's runs wrote."""
    d = _reader(repo, model)
    data = DataRepository(repo.datastore)
    with reading(repo):
        if workflow is None:
            rec = data.get(d.type, d.id, name, version)
        else:
            rec = _written_by(data, d, name, version, workflow)
        raw = data.content(rec) if content else None
    return {"model": d.name, **record_json(rec, raw)}


def _written_by(data: DataRepository, d, name: str, version: int | None, workflow: str):
    for rec in reversed(list(data.records(d.type, d.id, name))):
        tags = rec.meta.tags
        run_id = tags.get("workflowRunId", "")
        if (version is None or rec.meta.version == version) and (
                tags.get("workflow") == workflow or (len(workflow) >= 4 and run_id.startswith(workflow))):
            return rec
    raise NotFoundError(f"no version of {d.name}/{name} was written by workflow or run {workflow!r}",
                        hint=f"see which runs wrote it: swamp data search --model {d.name} --all-versions")


def rename(repo: Repo, model: str, old: str, new: str) -> dict:
    """Every version of ``old`` becomes a version of ``new`` with the same
    number; ``old`` then forwards to ``new`` (reads of it find ``new``'s
    versions), under the model's lease."""
    from swamp.errors import ConflictError
    from swamp.util.names import check_data_name

    check_data_name(new)
    d = _definition(repo, model)
    data = DataRepository(repo.datastore)
    counts = SyncCounts()

    def value(moved):
        return {"model": d.name, "from": old, "to": new, "versions": moved, "sync": counts.to_json()}

    moved: list[int] = []
    try:
        with changing(repo, f"data rename {d.name} {old} {new}", leases=[model_lock_name(d.type, d.id)],
                      into=counts):
            if not data.versions(d.type, d.id, old):
                raise NotFoundError(f"model {d.name!r} has no data named {old!r}")
            if old == new:
                raise ConflictError(f"{old!r} is already called that")
            if data.versions(d.type, d.id, new) or data.latest_version(d.type, d.id, new) is not None \
                    or data.ds.listdir(f"{data_layout.name_dir(d.type, d.id, new)}"):
                raise ConflictError(f"model {d.name!r} already has data named {new!r}",
                                    hint="choose another name, or delete that data first")
            moved = data.rename(d.type, d.id, old, new)
    except UnpublishedError as e:
        raise e.with_value(value(moved))
    return value(moved)


def prune(repo: Repo, model: str | None = None, name: str | None = None, *, older_than: str | None = None,
          keep: int | None = None, orphans: bool = False, dry_run: bool = False) -> dict:
    """Versions older than a duration or beyond the newest N (never a name's
    newest), and with ``orphans`` every version of data whose definition is
    gone. Found in one read; each model with something to prune is pruned
    under its own lease after a fresh look."""
    from swamp.data.lifetimes import versions_to_prune
    from swamp.errors import UsageError
    from swamp.util.durations import duration_seconds

    if older_than is None and keep is None and not orphans:
        raise UsageError("say what to prune: --older-than DURATION, --keep N or --orphans")
    if older_than is not None:
        duration_seconds(older_than)  # a bad duration is refused before anything else
    if keep is not None and keep < 1:
        raise UsageError("--keep keeps at least 1 version")
    from swamp.app.reports import workflow_owners

    names = {**names_by_id(repo), **workflow_owners(repo)}  # a workflow's reports are not orphans
    only = _definition(repo, model).id if model else None
    now = clock.now()

    def doomed(model_id: str, n: str, metas) -> list[int]:
        orphan = model_id not in names
        if name is not None and n != name:
            return []
        if orphans and orphan:
            return [m.version for m in metas]
        if orphan and (older_than is None and keep is None):
            return []
        return versions_to_prune(metas, now, older_than=older_than, keep=keep)

    return _delete_by_model(repo, "data prune", names, doomed, dry_run=dry_run,
                            first_look=reading(repo), only=only)


def list_names(repo: Repo, model: str | None) -> list[dict]:
    """Each data name with its latest version, sorted by model and name."""
    from swamp.app.data_owners import workflow_names
    from swamp.reports.store import WORKFLOW_OWNER

    ds = repo.datastore
    names = names_by_id(repo)
    only = _reader(repo, model).id if model else None
    data = DataRepository(ds)
    rows = []
    workflows = None
    with reading(repo):
        for model_type, model_id in iter_models(ds):
            if only and model_id != only:
                continue
            if model_type == WORKFLOW_OWNER and workflows is None:  # a workflow's reports: shown by its name
                workflows = workflow_names(repo, names.values())
            owner = (workflows or {}).get(model_id) if model_type == WORKFLOW_OWNER else names.get(model_id)
            for name in data.names(model_type, model_id):
                versions = data.versions(model_type, model_id, name)
                if not versions:
                    continue
                meta = data.metadata(model_type, model_id, name, versions[-1])
                rows.append({"model": owner or model_id, "modelType": model_type,
                             "modelId": model_id, "name": name, "latestVersion": versions[-1],
                             "versions": len(versions), "specName": meta.specName, "kind": meta.kind,
                             "updatedAt": meta.createdAt})
    return sorted(rows, key=lambda r: (r["model"], r["name"]))


def versions(repo: Repo, model: str, name: str) -> list[dict]:
    d = _reader(repo, model)
    with reading(repo):
        recs = list(DataRepository(repo.datastore).records(d.type, d.id, name))
    if not recs:
        raise NotFoundError(f"model {d.name!r} has no data named {name!r}")
    return [{"version": r.meta.version, "createdAt": r.meta.createdAt, "size": r.meta.size,
             "sha256": r.meta.sha256} for r in recs]


def delete(repo: Repo, model: str, name: str, version: int | None) -> dict:
    d = _definition(repo, model)
    data = DataRepository(repo.datastore)
    counts = SyncCounts()
    try:
        with changing(repo, f"data delete {d.name} {name}", leases=[model_lock_name(d.type, d.id)], into=counts):
            if version is None and not data.versions(d.type, d.id, name):
                raise NotFoundError(f"model {d.name!r} has no data named {name!r}")
            gone = data.delete(d.type, d.id, name, version)
    except UnpublishedError as e:
        raise e.with_value({"model": d.name, "name": name, "deletedVersions": gone, "sync": counts.to_json()})
    return {"model": d.name, "name": name, "deletedVersions": gone, "sync": counts.to_json()}


def gc(repo: Repo, *, dry_run: bool) -> dict:
    """Delete expired versions and versions beyond each name's policy. One
    read finds what to collect; only a model with something to collect is
    then collected, under its own lease and after a fresh look (a busy model
    with nothing to collect is never waited for)."""
    from swamp.data.lifetimes import versions_to_collect  # here: data get need not load it (with durations)
    from swamp.workflows import records as run_records

    ds = repo.datastore
    now = clock.now()
    live_runs: set[str] = set()

    def doomed(model_id: str, name: str, metas) -> list[int]:
        return versions_to_collect(metas, now, live_runs)

    def runs_alive() -> None:
        # data living as long as its workflow run goes once the run is deleted
        live_runs.update(rid for wid in ds.listdir(run_records.RUNS) for rid in run_records.run_ids(ds, wid))

    # Not a dry run: the first look is a session that also publishes what an
    # earlier gc deleted here but could not publish (its push failed), even
    # when there is nothing left to collect now.
    return _delete_by_model(repo, "data gc", names_by_id(repo), doomed, dry_run=dry_run,
                            first_look=reading(repo) if dry_run else changing(repo, "data gc"),
                            before=runs_alive)


def _delete_by_model(repo: Repo, command: str, names: dict[str, str], doomed, *, dry_run: bool, first_look,
                     only: str | None = None, before=lambda: None) -> dict:
    """What gc and prune share. One read (``first_look``, a session; after
    ``before``) finds, per model, the versions ``doomed(model_id, name,
    metas)`` names; then each model with something to delete is deleted
    under its own lease after a fresh look (a busy model with nothing to
    delete is never waited for). Reports ``{deleted, dryRun}``; when a push
    fails, the report of what was done here goes with the error."""
    ds = repo.datastore

    def select(model_type: str, model_id: str, *, apply: bool) -> list[dict]:
        data = DataRepository(ds)
        out = []
        for name in sorted(data.names(model_type, model_id)):
            metas = [r.meta for r in data.records(model_type, model_id, name)]
            for v in doomed(model_id, name, metas):
                if apply:
                    data.delete(model_type, model_id, name, v)
                out.append({"model": names.get(model_id, model_id), "name": name, "version": v})
        return out

    deleted: list[dict] = []

    def report() -> dict:
        return {"deleted": sorted(deleted, key=lambda r: (r["model"], r["name"], r["version"])),
                "dryRun": dry_run}

    try:
        with first_look:
            before()
            found = {m: select(*m, apply=False) for m in iter_models(ds) if only is None or m[1] == only}
        for (model_type, model_id), rows in sorted(found.items()):
            if dry_run:
                deleted += rows
            elif rows:
                with changing(repo, command, leases=[model_lock_name(model_type, model_id)]):
                    deleted += select(model_type, model_id, apply=True)
    except UnpublishedError as e:
        raise e.with_value(report())
    return report()


def search(repo: Repo, text: str | None, *, model: str | None = None, limit: int = 100,
           all_versions: bool = False, tags: dict[str, str] | None = None) -> list[dict]:
    """Data whose name, spec, type or tags contain ``text`` and that carry
    every tag in ``tags`` (latest versions unless ``all_versions``)."""
    from swamp.data import search as catalog

    model_id = _definition(repo, model).id if model else None
    with reading(repo):
        rows = catalog.catalog_rows(repo, names_by_id(repo), text=text, model_id=model_id,
                                    all_versions=all_versions)
    if tags:
        rows = [r for r in rows if all(r["tags"].get(k) == v for k, v in tags.items())]
    return rows[:limit]


def query(repo: Repo, predicate: str, *, limit: int = 100, all_versions: bool = False,
          readable: Callable[[dict], bool] | None = None) -> list[dict]:
    """Data versions for which the CEL ``predicate`` is true; each field of
    a row (name, version, specName, kind, size, tags, model, ...) is a
    variable, and so are the version's ``content`` and ``attributes``.
    ``readable``: only rows it accepts are tested (serve's caller's reads)."""
    from swamp.data import search as catalog

    with reading(repo):
        rows = catalog.catalog_rows(repo, names_by_id(repo), all_versions=all_versions)
        if readable is not None:
            rows = [r for r in rows if readable(r)]
        return catalog.matching(rows, predicate, limit, repo)  # in the session: contents are read
