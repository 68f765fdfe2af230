"""`swamp worker queue`: the placed steps that wait, and where they can go.

A placed step waits in one of two places. Before it is sent, its
dispatcher waits for a fitting worker to connect (queueTimeout); Dask does
not know the step then, so the dispatcher announces it on the scheduler
(``waiting_steps.announce``, withdrawn when the step ends). Once sent, it waits in the
scheduler while every fitting worker is busy (Dask's states ``no-worker``,
``queued``, ``waiting``), or on the worker it was handed to, until one of
that worker's slots is free (asked of the worker: the scheduler counts it
``processing`` either way). ``queue`` reads both on the scheduler, drops the
announcements of dispatchers that are gone, and names for each step the
connected workers that fit it and whether they are busy.

What is on the scheduler is the step's name, labels and target, never its
arguments or secrets."""

from __future__ import annotations

from swamp.workers import placement as labels_mod
from swamp.workers.waiting_steps import ATTR as _ATTR
#: Dask task states of a sent step that has not started on a worker
WAITING_STATES = ("no-worker", "queued", "waiting")


def queue(scheduler: str, *, link=None) -> list[dict]:
    """The waiting placed steps of ``scheduler``, oldest first: step,
    labels, target, state, since, and the fitting workers."""
    from swamp.workers.dispatch import connect

    client = connect(scheduler, link=link, insecure_flag="--insecure")
    try:
        waiting = client.run_on_scheduler(_waiting, states=(*WAITING_STATES, "processing"))
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
        busy = {addr for addr, keys in client.processing().items() if keys}
        held = {row["key"] for row in waiting if row["state"] == "processing"}
        if held:  # handed to a worker, which holds it until one of its slots is free
            not_started = client.run(_not_started, keys=sorted(held), on_error="return")
            started = held - {k for keys in not_started.values() if isinstance(keys, list) for k in keys}
            waiting = [r for r in waiting if r.get("key") not in started]
    finally:
        client.close()
    names = {addr: str(w.get("name")) for addr, w in workers.items()}
    rows = []
    for row in waiting:
        target = row["target"]
        if target is None and row.get("workerRestrictions"):
            only = sorted(names.get(a, a) for a in row["workerRestrictions"])
            target = only[0] if len(only) == 1 else None
        fitting = sorted(
            ({"name": names[a], "busy": a in busy} for a, w in workers.items()
             if labels_mod.fits(w, row["labels"], target)
             and (not row.get("workerRestrictions") or a in row["workerRestrictions"])),
            key=lambda f: f["name"])
        state = "waiting for a free fitting worker" if row["state"] == "processing" else row["state"]
        rows.append({"step": row["step"], "labels": row["labels"], "target": target, "state": state,
                     "since": _iso(row["since"]), "fittingWorkers": fitting})
    return sorted(rows, key=lambda r: (r["since"] or "", r["step"]))


def _iso(ts) -> str | None:
    from swamp.util.clock import isoformat

    return isoformat(ts) if ts else None


# ---------------------------------------------------------- on the scheduler
def _waiting(dask_scheduler=None, states=()) -> list[dict]:
    out = []
    table = getattr(dask_scheduler, _ATTR, {})
    for key, entry in list(table.items()):
        if entry.get("client") not in dask_scheduler.clients:
            table.pop(key, None)  # its dispatcher is gone: nobody waits any more
            continue
        if key in dask_scheduler.tasks:
            continue  # sent: the task's own state says the rest (below)
        out.append({**entry, "state": "waiting for a fitting worker to connect"})
    for key, ts in dask_scheduler.tasks.items():
        name = str(key)
        if not name.startswith("swamp-step-") or ts.state not in states:
            continue
        resources = dict(ts.resource_restrictions or {})
        entry = table.get(key) or {}
        out.append({"key": name, "step": entry.get("step") or name.removeprefix("swamp-step-").rsplit("-", 1)[0],
                    "labels": {k: v for k, v in ((r.partition("=")[0], r.partition("=")[2]) for r in resources)
                               if v},
                    "target": entry.get("target"), "since": entry.get("since"),
                    "workerRestrictions": sorted(ts.worker_restrictions or ()),
                    "state": "processing" if ts.state == "processing"
                    else "waiting for a free fitting worker" if ts.state == "no-worker" else ts.state})
    return out


def _not_started(dask_worker=None, keys=()) -> list[str]:
    """On a worker: which of ``keys`` it holds without running them yet."""
    tasks = dask_worker.state.tasks
    return [k for k in keys if k in tasks and tasks[k].state not in ("executing", "long-running", "memory")]
