"""Runs whose process is gone: found through the run's own lease, and
recorded as interrupted.

A workflow run holds its lease, ``workflow-run/<run id>``
(``workflows.records.run_lock``), for the whole time it executes, and the
lease heartbeats in the datastore (every third of its ttl). So a run
recorded ``running`` whose lease went stale (its holder on this machine
exited, or this process watched the lease unchanged for its whole ttl)
was left by a process that died: killed with SIGKILL, its machine lost.
No second lock and no second heartbeat: the lease is both.

Used by ``swamp serve`` (each replica looks every few seconds, so a peer
records the run of a replica killed mid-run) and by ``swamp run doctor``,
which calls :func:`find_orphaned_runs` and :func:`mark_interrupted` (with
``unleased=True``, and ``wait_s`` to watch leases held on other machines).

A run is recorded ``interrupted`` (a status of its own) with
``failureReason`` starting ``interrupted:`` (the reason says which holder
and why), its steps that were running ``failed`` with the error
``interrupted``. (Records from before the status existed say ``failed``
with that reason; both count as marked.) Marking takes the
run's lease (taking over the stale one, which fences the dead holder's late
commits) and reads the record afresh, so two replicas marking at once mark
it once; a holder that comes back keeps its lease, and its run is left
alone.

A run being resumed is never recorded running without its lease held:
``workflow resume`` (app/workflows.py) takes the lease before it claims the
run and keeps it until the run ends. And a process that runs on after its
run was marked (it was frozen past its lease's ttl, say) never saves over
the mark: its next save reads the record under the lease, after its pull,
and fails with a ConflictError instead."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from swamp.app.lifecycle import changing, reading
from swamp.datastore.locks import holder_exited
from swamp.errors import LockTimeoutError, SwampError, UnpublishedError
from swamp.util import clock
from swamp.workflows import records

if TYPE_CHECKING:
    from swamp.repo.context import Repo

PREFIX = "workflow-run/"
#: statuses a run has while its process is at work
ACTIVE = ("running", "pending")
#: how long marking waits for a run's lease (a stale one is taken at once)
TAKE_TIMEOUT_MS = 3000


@dataclass(frozen=True)
class Orphan:
    run_id: str
    workflow_id: str
    workflow: str
    status: str
    reason: str

    def to_json(self) -> dict:
        return {"runId": self.run_id, "workflowId": self.workflow_id, "workflowName": self.workflow,
                "status": self.status, "reason": self.reason}


def is_marked(run) -> bool:
    """Whether ``run`` (a WorkflowRun) is recorded interrupted: failed, its
    reason starting ``interrupted:``. A process still running it must not
    save over that mark (app/workflows.py refuses to)."""
    return run.status == "interrupted" or (run.status == "failed"
                                           and (run.failureReason or "").startswith("interrupted"))


def _why(lease: dict) -> str:
    who = f"{lease.get('holder') or 'an unknown holder'} (pid {lease.get('pid')})"
    if holder_exited(lease):
        return f"interrupted: the process running it, {who}, exited without finishing it"
    return (f"interrupted: the process running it, {who}, stopped heartbeating: its lease "
            f"{lease['name']} was not renewed for {lease.get('ttlMs', 0) / 1000:g} s")


def find_orphaned_runs(repo: Repo, *, unleased: bool = False, wait_s: float = 0.0) -> list[Orphan]:
    """Runs recorded running (or pending) whose holder is gone, sorted by id.

    A run's lease is stale when its holder on this machine exited, or when
    this process has watched it unchanged for its ttl (the leases' watch is
    kept per process: a server calling this every few seconds sees a lease
    held elsewhere go stale one ttl after its last heartbeat). ``wait_s``
    looks again after that many seconds (a one-off caller passes the ttl,
    30 s, to judge holders on other machines). ``unleased`` also returns
    runs recorded running with no lease at all (broken by hand with
    ``datastore lock release --force``); that scans every record."""
    ds = repo.datastore
    leases = ds.lock_status()
    if wait_s > 0 and any(not l["stale"] for l in leases if l["name"].startswith(PREFIX)):
        time.sleep(wait_s)
        leases = ds.lock_status()
    runs = {l["name"][len(PREFIX):]: l for l in leases if l["name"].startswith(PREFIX)}
    stale = {rid: l for rid, l in runs.items() if l["stale"]}
    out: list[Orphan] = []
    if not stale and not unleased:
        return out  # nothing to read: no pull
    with reading(repo):
        for rid, lease in sorted(stale.items()):
            try:
                run = records.find_run(ds, rid)
            except SwampError:  # a lease whose record is gone (or unreadable): nothing to mark
                continue
            if run.status in ACTIVE:
                out.append(Orphan(run.id, run.workflowId, run.workflowName, run.status, _why(lease)))
        if unleased:
            for run in records.all_runs(ds):
                if run.status == "running" and run.id not in runs:
                    out.append(Orphan(run.id, run.workflowId, run.workflowName, run.status,
                                      f"interrupted: recorded running by {run.initiatedBy or 'someone'} "
                                      f"(host {run.host}, pid {run.pid}), but nothing holds its lease"))
    return sorted(out, key=lambda o: o.run_id)


def mark_interrupted(repo: Repo, run: Orphan, reason: str | None = None) -> dict | None:
    """Record ``run`` (found by :func:`find_orphaned_runs`) as interrupted,
    under its lease: returns the row written (``runId``, ``workflowName``,
    ``status``, ``reason``), or None when there was nothing to do (a peer
    marked it first, the run finished, or its holder is alive after all)."""
    reason = reason or run.reason
    if not reason.startswith("interrupted"):
        reason = f"interrupted: {reason}"
    ds = repo.datastore
    lock = records.run_lock(run.run_id)
    try:
        with ds.lock(lock, timeout_ms=TAKE_TIMEOUT_MS):  # the session below takes it again at no cost
            with changing(repo, f"workflow run {run.workflow} interrupted", leases=[lock]):
                fresh = records.load(ds, run.workflow_id, run.run_id)
                if fresh.status not in ACTIVE:
                    return None
                failed = None
                for jr, s in fresh.steps():
                    if s.status == "running":
                        s.status, s.error = "failed", "interrupted"
                        s.completedAt = clock.isoformat()
                        failed = failed or f"{jr.name}/{s.name}"
                for jr in fresh.jobs:
                    if jr.status == "running":
                        jr.status = "failed"
                fresh.status = "interrupted"
                fresh.failedStep = failed
                fresh.failureReason = reason
                fresh.completedAt = clock.isoformat()
                log = records.read_log(ds, fresh.workflowId, fresh.id)
                records.write(ds, fresh.workflowId, fresh.id, records.dump(fresh),
                              log + f"{clock.isoformat()} run {fresh.id}: failed ({reason})\n")
    except LockTimeoutError:
        return None  # its holder renewed the lease: alive after all
    except UnpublishedError:
        pass  # recorded here; the next session publishes it
    return {"runId": run.run_id, "workflowName": run.workflow, "status": "interrupted", "reason": reason}


def reap(repo: Repo, **kw) -> list[dict]:
    """Find the orphaned runs and mark each: the rows marked here."""
    out = []
    for orphan in find_orphaned_runs(repo, **kw):
        row = mark_interrupted(repo, orphan)
        if row:
            out.append(row)
    return out


# ----------------------------------------------------------- replicas
REPLICA_PREFIX = "serve-replica/"


def replica_lease(replica: str) -> str:
    """The lease a ``swamp serve`` replica holds while it serves: its
    heartbeat in the datastore (``swamp datastore lock status`` lists it)."""
    return REPLICA_PREFIX + replica


@contextlib.contextmanager
def heartbeat(repo: Repo, replica: str) -> Iterator[None]:
    """Hold the replica's lease (it heartbeats every third of its ttl) for
    as long as the block runs."""
    with repo.datastore.lock(replica_lease(replica), timeout_ms=TAKE_TIMEOUT_MS):
        yield


def replicas(repo: Repo) -> list[dict]:
    """The serve replicas holding a lease on this datastore: ``replica``,
    ``holder``, ``acquiredAt``, ``stale`` (stopped heartbeating), sorted."""
    return [{"replica": l["name"][len(REPLICA_PREFIX):], "holder": l.get("holder"), "pid": l.get("pid"),
             "acquiredAt": l.get("acquiredAt"), "stale": l["stale"]}
            for l in repo.datastore.lock_status() if l["name"].startswith(REPLICA_PREFIX)]
