"""Signal use cases: send a message to a step waiting for one, list the
waits, settle an expired wait, and (for serve) resume each run whose wait
was settled, once.

Every settlement is the claim a serve schedule makes for a cron tick
(``app/schedules.py``): one ``changing`` session under the wait's lease
(``signals.lease_name``): pull, look for the record, create it if absent,
push. The record is written once and never edited, and the run record is
never touched by a sender. Whoever finds the record there has lost, and is
told who won."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from swamp.app.lifecycle import changing, is_published, reading
from swamp.datastore.locks import holder_exited, machine_identity
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ConflictError, LeaseLostError, NotFoundError, SwampError, UnpublishedError
from swamp.util import clock
from swamp.util.actors import local_user
from swamp.util.ids import hostname, new_id
from swamp.workflows import records, signals
from swamp.workflows.files import find_workflow
from swamp.workflows.records import WorkflowRun
from swamp.workflows.runs import FINISHED
from swamp.workflows.schema import workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo

OPEN = ("suspended", "running")


def _target(repo: Repo, wf, run_id: str | None, step: str):
    """(run, owner run, job, step) of the open wait ``step``: in run
    ``run_id``, or in the newest suspended or running run that waits there."""
    ds = repo.datastore
    if run_id:
        run = records.load(ds, workflow_id(wf), run_id)
        return (run, *signals.find_wait(ds, run, step))
    first_error = None
    for run in records.history(ds, workflow_id(wf)):
        if run.status not in OPEN:
            continue
        try:
            return (run, *signals.find_wait(ds, run, step))
        except SwampError as e:
            first_error = first_error or e
    if first_error is not None:
        raise first_error
    raise NotFoundError(f"no run of {wf.name!r} waits for a signal",
                        hint="list the waits with 'swamp workflow signals'")


def _wait_step(ds, owner: WorkflowRun, job: str, step: str):
    return next(s for s in owner.job(job).steps if s.name == step)


def signal(repo: Repo, name: str, step: str, message: Any, run_id: str | None = None, *, by: str | None = None) -> dict:
    """Deliver ``message`` to the step ``step`` (STEP or JOB/STEP) waiting
    in a run of workflow ``name``. A message that breaks the step's schema
    is refused before anything is written. Raises ConflictError naming
    the winner when the wait was already settled (by a signal or its
    timeout)."""
    _, wf = find_workflow(repo, name)
    ds = repo.datastore
    with reading(repo):
        run, owner, job, step_name = _target(repo, wf, run_id, step)
        owner_wf = wf if owner.workflowId == run.workflowId else find_workflow(repo, owner.workflowName)[1]
        declared = signals.step_definition(owner_wf, job, _wait_step(ds, owner, job, step_name))
    where = f"{job}/{step_name}"
    signals.check_message(declared.task.signalSchema, message, where)  # refused: nothing written
    me = by or local_user()
    mine = None
    existing = None
    value = None
    try:
        with changing(repo, f"workflow signal {wf.name} {where}", leases=[signals.lease_name(owner.id)]):
            fresh = records.load(ds, owner.workflowId, owner.id)
            wait = _wait_step(ds, fresh, job, step_name).signal
            if wait is None:
                raise ConflictError(f"step {where} of run {owner.id} no longer waits (it was restarted)",
                                    hint="see 'swamp workflow signals'")
            existing = signals.read_outcome(ds, owner.workflowId, owner.id, job, step_name, wait.requestedAt)
            if existing is None and wait.outcome is not None:
                existing = wait.model_dump()
            if existing is None:
                if fresh.status in FINISHED:
                    raise ConflictError(f"run {owner.id} is {fresh.status}; it waits for nothing")
                if signals.expired(wait):
                    # too late: the timeout settles the wait, and the sender hears so
                    existing = signals.outcome_doc(
                        fresh, job, step_name, wait.requestedAt, "timed_out",
                        declared.task.default if declared.task.onTimeout == "continue" else None, me)
                    signals.create_outcome(ds, existing)
                else:
                    mine = signals.outcome_doc(fresh, job, step_name, wait.requestedAt, "signalled", message, me)
                    signals.create_outcome(ds, mine)
                    value = _result(run, owner, mine)
    except UnpublishedError as e:
        if mine is not None:
            raise e.with_value(value)
        raise
    if existing is not None:
        raise ConflictError(f"step {where} of run {owner.id} was already settled: {signals.describe(existing)}",
                            hint="a wait takes one message; see the run with "
                                 f"'swamp workflow history get {run.id}'")
    return value


def _result(run: WorkflowRun, owner: WorkflowRun, doc: dict) -> dict:
    out = {"workflowName": run.workflowName, "runId": run.id, "job": doc["job"], "step": doc["step"],
           "outcome": doc["outcome"], "by": doc["by"], "at": doc["at"], "message": doc["message"]}
    if owner.id != run.id:
        out["nestedRunId"] = owner.id
    return out


def settle_timeout(repo: Repo, run: WorkflowRun, job: str, step: str, message: Any,
                   *, into: SyncCounts | None = None) -> dict | None:
    """Settle the expired wait ``job/step`` of ``run`` as timed out (with
    ``message``, the default of ``onTimeout: continue``), unless something
    settled it first: the outcome that stands. None when the settlement
    could not be published (the wait stays open; a later look settles it)."""
    ds = repo.datastore
    since = _wait_step(ds, run, job, step).signal.requestedAt  # the live record of the run
    try:
        with changing(repo, f"workflow {run.workflowName}: {job}/{step} timed out",
                      leases=[signals.lease_name(run.id)], into=into):
            existing = signals.read_outcome(ds, run.workflowId, run.id, job, step, since)
            if existing is not None:
                return existing
            doc = signals.outcome_doc(run, job, step, since, "timed_out", message, local_user())
            signals.create_outcome(ds, doc)
    except UnpublishedError:
        return None
    return doc


def waiting(repo: Repo, name: str | None = None) -> list[dict]:
    """Every wait of a suspended or running run (of ``name``, or of every
    workflow), with its state: waiting, or settled and about to continue."""
    wid = workflow_id(find_workflow(repo, name)[1]) if name else None
    ds = repo.datastore
    out = []
    with reading(repo):
        for run in records.all_runs(ds):
            if run.status not in OPEN or (wid and run.workflowId != wid) or run.parentRunId:
                continue
            for owner, j, s in signals.waiting(ds, run):
                w = s.signal
                outcome = signals.read_outcome(ds, owner.workflowId, owner.id, j.name, s.name, w.requestedAt)
                state = ("waiting" if outcome is None and not signals.expired(w)
                         else "timed out" if outcome is None else outcome["outcome"].replace("_", " "))
                row = {"workflowName": run.workflowName, "runId": run.id, "job": j.name, "step": s.name,
                       "prompt": w.prompt, "requestedAt": w.requestedAt, "timeoutSeconds": w.timeoutSeconds,
                       "deadline": signals.deadline_iso(w), "state": state}
                if outcome is not None:
                    row["settledBy"] = outcome.get("by")
                if owner.id != run.id:
                    row["nestedRunId"] = owner.id
                out.append(row)
    return sorted(out, key=lambda a: (a["requestedAt"], a["runId"], a["job"], a["step"]))


# -------------------------------------------------------------- serve
class Watched:
    """What a server keeps between its looks for waits to resume: which
    workflow files can wait (re-read only when a file changes), and an
    index of run records by file stamp (workflows/run_index.py),
    so a look loads only the suspended runs' records."""

    def __init__(self) -> None:
        from swamp.workflows.run_index import RunIndex

        self.index = RunIndex(None)
        self._files: dict[str, tuple[int, str | None]] = {}

    def workflows(self, repo: Repo) -> set[str]:
        """Ids of the workflows whose runs may wait for a signal: those with
        a wait_for_signal step, and those that nest other workflows."""
        from swamp.workflows.files import iter_workflow_files, load_workflow

        out = set()
        for p in iter_workflow_files(repo):
            try:
                stamp = p.stat().st_mtime_ns
            except OSError:
                continue
            known = self._files.get(str(p))
            if known is None or known[0] != stamp:
                wid = None
                try:
                    wf = load_workflow(p, repo.root)
                    if any(s.task.type in ("wait_for_signal", "workflow") for j in wf.jobs for s in j.steps):
                        wid = workflow_id(wf)
                except SwampError:
                    pass
                known = self._files[str(p)] = (stamp, wid)
            if known[1]:
                out.add(known[1])
        return out

    def suspended(self, ds, wid: str) -> list[str]:
        return [r["id"] for r in self.index.rows(ds, wid) if r["status"] == "suspended" and not r["parentRunId"]]


# A resume claim names its attempt. The replica that made it knows whether
# its attempt is in flight, done or failed (a failed one it withdraws); a
# claim made by a process that is gone, or that another replica has watched
# for CLAIM_TTL_S on its own monotonic clock while the run stayed
# suspended, is stale (the rule of a lease, datastore/sync/lease.py): it is
# claimed again. Two resumes of one run can never both run it: the run's
# own claim (app/workflows.py, under its lease) takes a suspended run once.
#: how long another replica's claim may go without its run being resumed
CLAIM_TTL_S = 90.0
_attempts: dict[str, str] = {}  # attempt id -> "inflight" | "done" | "failed" (this process's)
_first_seen: dict[str, float] = {}  # another process's attempt -> when this process first saw it
_pending: dict[str, tuple] = {}  # run id -> (attempt, owner, job, step) of the resume in flight here
_mutex = threading.Lock()


def _read_claim(ds, marker: str) -> dict | None:
    try:
        doc = json.loads(ds.read_bytes(marker))
    except NotFoundError:
        return None
    except (ValueError, SwampError):
        doc = {}
    return doc if isinstance(doc, dict) else {}


def _claim_live(marker: str, doc: dict) -> bool:
    """Whether the resume claim ``doc`` (at ``marker``) still stands."""
    attempt = str(doc.get("attempt") or f"{marker}@{doc.get('claimedAt')}")  # a claim from before attempts
    with _mutex:
        mine = _attempts.get(attempt)
        if mine is not None:
            return mine != "failed"
        if (doc.get("host"), doc.get("pid"), doc.get("machine")) == (hostname(), os.getpid(),
                                                                     machine_identity(os.getpid())):
            return False  # made here, by an attempt this process no longer knows
        if holder_exited(doc):
            return False  # its claimer on this machine is gone
        first = _first_seen.setdefault(attempt, time.monotonic())
    return time.monotonic() - first < CLAIM_TTL_S


def _machine() -> str:
    """Where this process runs, as a lease records it (datastore/locks.py)."""
    return machine_identity(os.getpid())


def ready(repo: Repo, watched: Watched | None = None) -> list[tuple[WorkflowRun, WorkflowRun, str, str]]:
    """(run, owner, job, step) for each suspended top-level run with a wait
    that is settled or past its deadline, and not claimed to resume by a
    claim that still stands."""
    ds = repo.datastore
    watched = watched or Watched()
    out = []
    with reading(repo):
        for wid in sorted(watched.workflows(repo)):
            for rid in watched.suspended(ds, wid):
                try:
                    run = records.load(ds, wid, rid)
                except SwampError:
                    continue
                if run.status != "suspended" or run.parentRunId:
                    continue
                for owner, j, s in signals.waiting(ds, run):
                    since = s.signal.requestedAt
                    marker = signals.resumed_path(owner.workflowId, owner.id, j.name, s.name, since)
                    doc = _read_claim(ds, marker)
                    if doc is not None and _claim_live(marker, doc):
                        continue
                    if (signals.expired(s.signal) or
                            signals.read_outcome(ds, owner.workflowId, owner.id, j.name, s.name, since) is not None):
                        out.append((run, owner, j.name, s.name))
                        break
    return out


def claim_resume(repo: Repo, run: WorkflowRun, owner: WorkflowRun, job: str, step: str, *, by: str) -> str | None:
    """The attempt id when this caller claimed the resume of ``run`` for
    the settled (or expired: settled now, as timed out) wait ``job/step``,
    and must resume it; None when it did not. A claim whose push failed is
    not a claim: its marker, never published, is taken back, so the next
    look claims again. A claim that landed is one, whatever failed after."""
    ds = repo.datastore
    attempt = new_id()
    marker = None
    try:
        with changing(repo, f"workflow signal resume {run.workflowName} {job}/{step}",
                      leases=[signals.lease_name(owner.id)]):
            fresh = records.load(ds, owner.workflowId, owner.id)
            s = _wait_step(ds, fresh, job, step)
            if s.signal is None or s.status != "waiting_signal":
                return None  # continued meanwhile (a resume by hand), or restarted
            since = s.signal.requestedAt
            marker = signals.resumed_path(owner.workflowId, owner.id, job, step, since)
            doc = _read_claim(ds, marker)
            if doc is not None and _claim_live(marker, doc):
                return None
            if signals.read_outcome(ds, owner.workflowId, owner.id, job, step, since) is None:
                if not signals.expired(s.signal):
                    return None
                task = signals.step_definition(find_workflow(repo, owner.workflowName)[1], job, s).task
                signals.create_outcome(ds, signals.outcome_doc(
                    fresh, job, step, since, "timed_out", task.default if task.onTimeout == "continue" else None, by))
            ds.write_bytes(marker, json.dumps({"runId": run.id, "by": by, "attempt": attempt, "host": hostname(),
                                               "pid": os.getpid(), "machine": _machine(),
                                               "claimedAt": clock.isoformat()}).encode())
    except (UnpublishedError, ConflictError, LeaseLostError):
        if marker is None:
            raise
        doc = _read_claim(ds, marker)
        if doc is None or doc.get("attempt") != attempt:
            return None
        if is_published(ds, marker):
            return attempt  # the commit landed; only what came after it failed
        ds.delete(marker)  # never published: take it back, the next look claims again
        return None
    return attempt


def _withdraw(repo: Repo, attempt: str, owner: WorkflowRun, job: str, step: str) -> None:
    """Take back the claim ``attempt`` whose resume failed (best effort: if
    this fails too, this process's next look still takes the claim for
    failed, and another replica's after CLAIM_TTL_S)."""
    ds = repo.datastore
    try:
        with changing(repo, f"workflow signal resume {owner.workflowName} {job}/{step} withdrawn",
                      leases=[signals.lease_name(owner.id)]):
            fresh = records.load(ds, owner.workflowId, owner.id)
            s = _wait_step(ds, fresh, job, step)
            if s.signal is None:
                return
            marker = signals.resumed_path(owner.workflowId, owner.id, job, step, s.signal.requestedAt)
            doc = _read_claim(ds, marker)
            if doc is not None and doc.get("attempt") == attempt:
                ds.delete(marker)
    except SwampError:
        pass


def resume_finished(repo: Repo, run_id: str, *, ok: bool) -> None:
    """Say how the resume of ``run_id`` claimed here ended (serve's resume
    thread): a failed one is withdrawn, so the run is claimed again."""
    with _mutex:
        pending = _pending.pop(run_id, None)
        if pending is not None:
            _attempts[pending[0]] = "done" if ok else "failed"
    if pending is not None and not ok:
        _withdraw(repo, *pending)


def resume_ready(repo: Repo, *, by: str, resume, watched: Watched | None = None) -> list[dict]:
    """Resume, once across every replica, each run whose wait was settled
    or expired: ``resume(run)`` (serve: ``app.workflows.resume`` in a
    thread, which calls :func:`resume_finished`) is called for each run
    this caller claimed. Returns them. When ``resume`` raises, the claim is
    withdrawn (the next look claims the run again) and the error raised."""
    claimed = []
    for run, owner, job, step in ready(repo, watched):
        attempt = claim_resume(repo, run, owner, job, step, by=by)
        if attempt is None:
            continue
        with _mutex:
            _attempts[attempt] = "inflight"
            _pending[run.id] = (attempt, owner, job, step)
        claimed.append({"workflowName": run.workflowName, "runId": run.id, "job": job, "step": step})
        try:
            resume(run)
        except BaseException:
            resume_finished(repo, run.id, ok=False)
            raise
    return claimed
