"""Data services the CLI calls: one function per command."""

from __future__ import annotations

from swamp.data.lifetimes import versions_to_collect
from swamp.data.records import record_json
from swamp.data.repository import DataRepository
from swamp.data.search import catalog_rows, matching
from swamp.data.walk import iter_models
from swamp.models.leases import model_lock_name
from swamp.errors import NotFoundError
from swamp.util import clock


def _definition(repo, model: str):
    from swamp.models.definition_files import find

    return find(repo, model)[1]


def _names_by_id(repo) -> dict[str, str]:
    from swamp.models.definition_files import names_by_id

    return names_by_id(repo)


def get_data(repo, model: str, name: str, version: int | None, *, content: bool = True) -> dict:
    d = _definition(repo, model)
    ds = repo.datastore
    with ds.session(mutating=False):
        data = DataRepository(ds)
        rec = data.get(d.type, d.id, name, version)
        raw = data.content(rec) if content else None
    return {"model": d.name, **record_json(rec, raw)}


def list_data(repo, model: str | None) -> list[dict]:
    ds = repo.datastore
    names = _names_by_id(repo)
    rows = []
    only = _definition(repo, model).id if model else None
    with ds.session(mutating=False):
        data = DataRepository(ds)
        for model_type, model_id in iter_models(ds):
            if only and model_id != only:
                continue
            for name in data.names(model_type, model_id):
                versions = data.versions(model_type, model_id, name)
                if not versions:
                    continue
                meta = data.metadata(model_type, model_id, name, versions[-1])
                rows.append({"model": names.get(model_id, model_id), "modelType": model_type,
                             "modelId": model_id, "name": name, "latestVersion": versions[-1],
                             "versions": len(versions), "specName": meta.specName, "kind": meta.kind,
                             "updatedAt": meta.createdAt})
    return sorted(rows, key=lambda r: (r["model"], r["name"]))


def list_versions(repo, model: str, name: str) -> list[dict]:
    d = _definition(repo, model)
    ds = repo.datastore
    with ds.session(mutating=False):
        recs = list(DataRepository(ds).records(d.type, d.id, name))
    if not recs:
        raise NotFoundError(f"model {d.name!r} has no data named {name!r}")
    return [{"version": r.meta.version, "createdAt": r.meta.createdAt, "size": r.meta.size,
             "sha256": r.meta.sha256} for r in recs]


def delete_data(repo, model: str, name: str, version: int | None) -> dict:
    d = _definition(repo, model)
    ds = repo.datastore
    with ds.session(mutating=True, locks=[model_lock_name(d.type, d.id)],
                    command=f"data delete {d.name} {name}") as counts:
        data = DataRepository(ds)
        if version is None and not data.versions(d.type, d.id, name):
            raise NotFoundError(f"model {d.name!r} has no data named {name!r}")
        gone = data.delete(d.type, d.id, name, version)
    return {"model": d.name, "name": name, "deletedVersions": gone, "sync": counts.to_json()}


def gc(repo, *, dry_run: bool) -> dict:
    """Delete expired versions and versions beyond each name's policy. One
    read finds what to collect; only a model with something to collect is
    then collected, under its own lock and after a fresh look (a busy model
    with nothing to collect is never waited for)."""
    ds = repo.datastore
    names = _names_by_id(repo)
    now = clock.now()

    def collect(model_type: str, model_id: str, *, apply: bool) -> list[dict]:
        data = DataRepository(ds)
        out = []
        for name in data.names(model_type, model_id):
            metas = [r.meta for r in data.records(model_type, model_id, name)]
            for v in versions_to_collect(metas, now):
                if apply:
                    data.delete(model_type, model_id, name, v)
                out.append({"model": names.get(model_id, model_id), "name": name, "version": v})
        return out

    with ds.session(mutating=False):
        found = {m: collect(*m, apply=False) for m in iter_models(ds)}
    deleted = []
    for (model_type, model_id), rows in found.items():
        if dry_run:
            deleted += rows
        elif rows:
            with ds.session(mutating=True, locks=[model_lock_name(model_type, model_id)], command="data gc"):
                deleted += collect(model_type, model_id, apply=True)
    deleted.sort(key=lambda r: (r["model"], r["name"], r["version"]))
    return {"deleted": deleted, "dryRun": dry_run}


def _reading(repo, sync: bool):
    """A read session (one pull), or nothing when the caller already runs
    inside one (the expression engine's data.* functions)."""
    import contextlib

    return repo.datastore.session(mutating=False) if sync else contextlib.nullcontext()


def search_data(repo, text: str | None, *, model: str | None = None, limit: int = 100,
                all_versions: bool = False, sync: bool = True) -> list[dict]:
    """Data whose name, spec, type or tags contain ``text`` (latest versions
    unless ``all_versions``)."""
    with _reading(repo, sync):
        rows = catalog_rows(repo, _names_by_id(repo), text=text,
                            model_id=_definition(repo, model).id if model else None, all_versions=all_versions)
    return rows[:limit]


def query_data(repo, predicate: str, *, limit: int = 100, all_versions: bool = False,
               sync: bool = True) -> list[dict]:
    """Data versions for which the CEL ``predicate`` is true; each field of
    a row (name, version, specName, kind, size, tags, model, ...) is a
    variable."""
    with _reading(repo, sync):
        rows = catalog_rows(repo, _names_by_id(repo), all_versions=all_versions)
    return matching(rows, predicate, limit)
