"""``swamp summarise`` (upstream's name; ``summarize`` too): what the
repository did lately, in one read session. Over a window (``--since``, a
duration back from now or a time; default 7d): method and workflow runs
by status, the failures, each workflow and model with its counts, the data
versions written (how many, how many bytes, under which names) and who
started what (actors as records name them, util/actors.py).

``limit`` caps the lists (failures, workflows, models, data names, who);
the counts are of everything in the window."""

from __future__ import annotations

from collections import Counter, defaultdict

from swamp.app import runs as run_history
from swamp.app.lifecycle import reading
from swamp.errors import UsageError
from swamp.util import clock

DEFAULT_SINCE = "7d"


def summarise(repo, *, since: str = DEFAULT_SINCE, limit: int | None = None) -> dict:
    if limit is not None and limit < 1:
        raise UsageError("--limit is at least 1")
    after = run_history._since_ts(since)
    rows = run_history.history(repo, since=since, limit=None)  # newest first
    method_runs = [r for r in rows if r["kind"] == "method"]
    workflow_runs = [r for r in rows if r["kind"] == "workflow"]
    data = _data_written(repo, after)
    cut = (lambda xs: xs[:limit]) if limit else (lambda xs: xs)
    return {
        "since": clock.isoformat(after), "window": since,
        "methodRuns": _by_status(method_runs), "workflowRuns": _by_status(workflow_runs),
        "failures": cut([{k: r[k] for k in ("kind", "name", "id", "status", "startedAt", "initiatedBy")}
                         for r in rows if r["status"] in ("failed", "interrupted")]),
        "workflows": cut(_groups(workflow_runs, "workflow")),
        "models": cut(_groups(method_runs, "model")),
        "data": {"versions": sum(d["versions"] for d in data), "bytes": sum(d["bytes"] for d in data),
                 "names": cut(data)},
        "who": cut(_who(rows)),
    }


def _by_status(rows: list[dict]) -> dict:
    counts = Counter(r["status"] for r in rows)
    return {"total": len(rows), **{s: counts[s] for s in sorted(counts)}}


def _groups(rows: list[dict], key: str) -> list[dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r[key] or "-"].append(r)
    out = []
    for name in sorted(groups):
        runs = groups[name]  # newest first, as history gives them
        out.append({"name": name, "runs": len(runs), "failed": sum(r["status"] == "failed" for r in runs),
                    "lastStatus": runs[0]["status"], "lastStartedAt": runs[0]["startedAt"]})
    return out


def _who(rows: list[dict]) -> list[dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r.get("initiatedBy") or "unknown"].append(r)
    return [{"actor": actor, "runs": len(rs), "failed": sum(r["status"] == "failed" for r in rs)}
            for actor, rs in sorted(groups.items())]


def _data_written(repo, after: float) -> list[dict]:
    """Each data name with versions written in the window: how many, their
    bytes, the newest; by model and name."""
    from swamp.data.repository import DataRepository
    from swamp.data.walk import iter_models
    from swamp.models.definition_files import names_by_id

    names = names_by_id(repo)
    out = []
    with reading(repo):
        data = DataRepository(repo.datastore)
        for model_type, model_id in iter_models(repo.datastore):
            for name in data.names(model_type, model_id):
                count = size = 0
                newest = None
                for version in reversed(data.versions(model_type, model_id, name)):  # newest first
                    meta = data.metadata(model_type, model_id, name, version)
                    if run_history._ts(meta.createdAt) < after:
                        break  # versions are numbered as they are written: the rest are older
                    count += 1
                    size += int(meta.size or 0)
                    newest = newest or meta.createdAt
                if count:
                    out.append({"model": names.get(model_id, model_id), "name": name, "versions": count,
                                "bytes": size, "newestAt": newest})
    return sorted(out, key=lambda d: (d["model"], d["name"]))
