"""Run housekeeping (``swamp run ...``): the history of method runs and
workflow runs together, collecting old run records with their logs, and
marking as interrupted the runs whose process is gone.

A method run's record (``outputs/...``) is written once, when it ends; a
workflow run's record (``workflow-runs/...``) is rewritten under the run's
lease while it goes. ``gc`` therefore deletes a workflow run only when it
has finished, under its lease and after a fresh look, and never one that
is pending, running or suspended."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.app import interrupted_runs
from swamp.app.interrupted_runs import PREFIX
from swamp.app.lifecycle import changing, reading
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import NotFoundError, UnpublishedError, UsageError
from swamp.models.definition_files import names_by_id
from swamp.models.outputs import iter_records
from swamp.util import clock
from swamp.util.durations import DURATION_RE, duration_seconds
from swamp.util.names import did_you_mean
from swamp.workflows import records, signals
from swamp.workflows.files import file_name, iter_workflow_files

if TYPE_CHECKING:
    from swamp.repo.context import Repo

KINDS = ("method", "workflow")
STATUSES = records.RUN_STATUSES
#: workflow runs gc may delete
FINISHED = ("succeeded", "failed", "cancelled", "interrupted")
#: run leases taken at once by one gc session
LEASE_BATCH = 32


def _since_ts(since: str | None) -> float | None:
    """``--since``: a duration back from now (7d, 12h) or an ISO time."""
    if since is None:
        return None

    if DURATION_RE.match(since):
        return clock.now() - duration_seconds(since)
    try:
        return clock.parse_iso(since).timestamp()
    except (ValueError, TypeError):
        raise UsageError(f"invalid --since {since!r}",
                         hint="a duration back from now (30m, 12h, 7d) or a time such as 2026-01-31T12:00:00Z") \
            from None


def _ts(iso: str | None) -> float:
    try:
        return clock.parse_iso(iso).timestamp() if iso else 0.0
    except (ValueError, TypeError):
        return 0.0


def _method_row(rel: str, r) -> dict:
    return {"kind": "method", "id": r.id, "name": f"{r.modelName}.{r.methodName}", "model": r.modelName,
            "method": r.methodName, "workflow": r.workflowName, "status": r.status, "startedAt": r.startedAt,
            "completedAt": r.completedAt, "durationMs": r.durationMs, "triggeredBy": r.triggeredBy,
            "initiatedBy": r.initiatedBy, "workflowRunId": r.workflowRunId, "path": rel}


def _workflow_row(r) -> dict:
    steps = [s for _, s in r.steps()]
    return {"kind": "workflow", "id": r.id, "name": r.workflowName, "model": None, "method": None,
            "workflow": r.workflowName, "status": r.status, "startedAt": r.startedAt,
            "completedAt": r.completedAt, "durationMs": r.durationMs, "triggeredBy": r.initiatedBy,
            "initiatedBy": r.initiatedBy, "workflowRunId": r.parentRunId, "steps": len(steps),
            "failedSteps": sum(s.status == "failed" for s in steps), "models": sorted({s.model for s in steps
                                                                                        if s.model}),
            "workflowId": r.workflowId}


def _all_rows(ds) -> list[dict]:
    rows = [_method_row(rel, r) for rel, r in iter_records(ds)]
    rows += [_workflow_row(r) for r in records.all_runs(ds)]
    rows.sort(key=lambda r: (r["startedAt"], r["id"]), reverse=True)
    return rows


def history(repo: Repo, *, kind: str | None = None, status: str | None = None, model: str | None = None,
            workflow: str | None = None, since: str | None = None, limit: int | None = 50) -> list[dict]:
    """Method and workflow runs, newest first. ``model`` keeps the runs of
    that model (and workflow runs with a step on it); ``workflow`` the runs
    of that workflow (and the method runs its steps made)."""
    if kind is not None and kind not in KINDS:
        raise UsageError(f"unknown run kind {kind!r}", hint=f"kinds: {', '.join(KINDS)}")
    if status is not None and status not in STATUSES:
        raise UsageError(f"unknown run status {status!r}", hint=f"statuses: {', '.join(STATUSES)}")
    if limit is not None and limit < 1:
        raise UsageError("--limit is at least 1")
    after = _since_ts(since)
    with reading(repo):
        rows = _all_rows(repo.datastore)
    _check_named(repo, rows, model, workflow)
    out = []
    for r in rows:
        if kind and r["kind"] != kind:
            continue
        if status and r["status"] != status:
            continue
        if model and r["model"] != model and model not in r.get("models", []):
            continue
        if workflow and r["workflow"] != workflow:
            continue
        if after is not None and _ts(r["startedAt"]) < after:
            continue
        out.append({k: v for k, v in r.items() if k not in ("models", "path")})
    out = out[:limit] if limit else out
    _mark_holders_gone(repo, out)
    return out


def _mark_holders_gone(repo: Repo, rows: list[dict]) -> None:
    """A workflow run recorded running whose lease is stale or
    missing was left by a process that is gone: its row says so
    (``holderGone``) before serve or `run doctor` records it interrupted.
    (From one command, a holder on another machine looks alive until a
    watcher has seen its lease unchanged for its ttl: serve does.)"""
    active = [r for r in rows if r["kind"] == "workflow" and r["status"] == "running"]
    if not active:
        return
    leases = {l["name"][len(PREFIX):]: l for l in repo.datastore.lock_status() if l["name"].startswith(PREFIX)}
    for r in active:
        lease = leases.get(r["id"])
        r["holderGone"] = lease is None or bool(lease["stale"])


def _check_named(repo: Repo, rows: list[dict], model: str | None, workflow: str | None) -> None:
    """A name that is neither defined nor in any run is a typo: say so."""
    if model is not None and not any(r["model"] == model or model in r.get("models", []) for r in rows):
        known = sorted(set(names_by_id(repo).values()) | {r["model"] for r in rows if r["model"]})
        if model not in known:
            raise NotFoundError(f"no model named {model!r}, and no run of one",
                                hint=did_you_mean(model, known) or "list models with 'swamp model search'")
    if workflow is not None and not any(r["workflow"] == workflow for r in rows):
        known = sorted({file_name(p) for p in iter_workflow_files(repo)} | {r["workflow"] for r in rows
                                                                             if r["workflow"]})
        if workflow not in known:
            raise NotFoundError(f"no workflow named {workflow!r}, and no run of one",
                                hint=did_you_mean(workflow, known) or "list workflows with 'swamp workflow search'")


# ======================================================================= gc
def _doomed(rows: list[dict], *, older_than_s: float | None, keep: int | None, kind: str | None) -> list[dict]:
    """Finished runs older than the cutoff, or beyond the newest ``keep`` of
    their model's method (method runs) or their workflow (workflow runs)."""
    now = clock.now()
    seen: dict[tuple, int] = {}
    out = []
    for r in rows:  # newest first
        if kind and r["kind"] != kind:
            continue
        group = (r["kind"], r["name"])
        seen[group] = seen.get(group, 0) + 1
        if r["kind"] == "workflow" and r["status"] not in FINISHED:
            continue  # pending, running or suspended: never collected
        old = older_than_s is not None and _ts(r["completedAt"] or r["startedAt"]) < now - older_than_s
        beyond = keep is not None and seen[group] > keep
        if old or beyond:
            out.append(r)
    return out


def _files_of(ds, r: dict) -> list[str]:
    if r["kind"] == "method":
        rel = r["path"]
        return [p for p in (rel, rel[: -len(".yaml")] + ".log") if ds.exists(p)]

    wid, rid = r["workflowId"], r["id"]
    own = [p for p in (records.record_path(wid, rid), records.log_path(wid, rid), records.cancel_path(wid, rid))
           if ds.exists(p)]
    return own + sorted(ds.walk(signals.wait_dir(wid, rid)))  # its signal waits' outcomes


def _size(ds, paths: list[str]) -> int:
    total = 0
    for p in paths:
        try:
            total += ds.local_path(p).stat().st_size
        except OSError:
            pass
    return total


def collect(repo: Repo, *, older_than: str | None = None, keep: int | None = None, kind: str | None = None,
            dry_run: bool = False) -> dict:
    """Delete old run records and their logs: finished runs whose end is
    older than ``older_than``, or beyond the newest ``keep`` per model
    method / per workflow. One read finds them; method records are deleted
    in one session; workflow runs under their run leases (in batches),
    after a fresh look that they are still finished. The data the runs
    wrote stays (it has its own lifetimes: ``swamp data gc``)."""
    if older_than is None and keep is None:
        raise UsageError("say which runs to collect: --older-than DURATION and/or --keep N")
    older_than_s = duration_seconds(older_than) if older_than is not None else None
    if keep is not None and keep < 0:
        raise UsageError("--keep is 0 or more")
    if kind is not None and kind not in KINDS:
        raise UsageError(f"unknown run kind {kind!r}", hint=f"kinds: {', '.join(KINDS)}")
    ds = repo.datastore
    counts = SyncCounts()
    deleted: list[dict] = []
    totals = {"files": 0, "bytes": 0}

    def report() -> dict:
        return {"dryRun": dry_run, "runs": len(deleted), "files": totals["files"], "bytes": totals["bytes"],
                "deleted": sorted(deleted, key=lambda d: (d["kind"], d["name"], d["startedAt"], d["id"])),
                "sync": counts.to_json()}

    def gone(r: dict, paths: list[str]) -> None:
        totals["files"] += len(paths)
        totals["bytes"] += _size(ds, paths)
        if not dry_run:
            for p in paths:
                ds.delete(p)
        deleted.append({"kind": r["kind"], "id": r["id"], "name": r["name"], "status": r["status"],
                        "startedAt": r["startedAt"]})

    try:
        # Not a dry run: the first look is a changing session, which also
        # deletes the method records found (they are written once, when the
        # run ends: no lease guards them).
        with (reading(repo, into=counts) if dry_run else changing(repo, "run gc", into=counts)):
            found = _doomed(_all_rows(ds), older_than_s=older_than_s, keep=keep, kind=kind)
            for r in found:
                if r["kind"] == "method" or dry_run:
                    gone(r, _files_of(ds, r))
        flows = [r for r in found if r["kind"] == "workflow"] if not dry_run else []
        for i in range(0, len(flows), LEASE_BATCH):
            batch = flows[i:i + LEASE_BATCH]
            with changing(repo, "run gc", leases=[records.run_lock(r["id"]) for r in batch], into=counts):
                for r in batch:
                    try:
                        fresh = records.load(ds, r["workflowId"], r["id"])
                    except NotFoundError:
                        continue  # deleted meanwhile by someone else
                    if fresh.status in FINISHED:
                        gone(r, _files_of(ds, r))
    except UnpublishedError as e:
        raise e.with_value(report())
    return report()


# =================================================================== doctor
def doctor(repo: Repo, *, dry_run: bool = False, wait_s: float = 0.0) -> dict:
    """Workflow runs recorded as pending or running whose holder is gone
    are marked interrupted (recorded failed, the reason starting
    ``interrupted:``), through ``app/interrupted_runs``: the run's lease is
    stale (its holder on this machine exited, or, with ``wait_s`` at least
    its ttl, nobody renewed it meanwhile), or nothing holds it at all.
    Method runs are recorded only once they end, so none is left running."""
    if wait_s < 0:
        raise UsageError("--wait is 0 or more seconds")
    found = interrupted_runs.find_orphaned_runs(repo, unleased=True, wait_s=wait_s)
    marked = []
    if not dry_run:
        for orphan in found:
            row = interrupted_runs.mark_interrupted(repo, orphan)
            if row:
                marked.append(row)
    return {"dryRun": dry_run, "orphaned": [o.to_json() for o in found],
            "marked": sorted(marked, key=lambda r: r["runId"])}
