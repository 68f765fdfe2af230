"""Workflow run records: ``workflow-runs/<workflowId>/workflow-run-<runId>.yaml``
with the run log beside it (``.log``), read and written only through the
Datastore so a shared datastore syncs them.

A record is the run's own document: it is rewritten as the run progresses
and ends in its final state. A suspended run keeps its inputs so that
``resume`` can continue it; any other record keeps only their names."""

from __future__ import annotations

from typing import Any, Iterator, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from swamp.datastore.base import Datastore
from swamp.errors import ConflictError, NotFoundError
from swamp.util import documents, yamlio
from swamp.vault.redact import redact_text
from swamp.vault.sentinel import describe_sentinels

RUNS = "workflow-runs"

#: interrupted: its process died mid-run, found and recorded by a peer, serve or `run doctor` (app/interrupted_runs.py)
RunStatus = Literal["pending", "running", "suspended", "succeeded", "failed", "cancelled", "interrupted"]
#: every status a run record can hold, in that order (what --status filters take)
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)
StepStatus = Literal["pending", "running", "waiting_approval", "waiting_signal", "succeeded", "failed", "skipped"]
SkipReason = Literal["dependency", "guarded", "condition"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Approval(_Doc):
    prompt: str
    requestedAt: str
    timeoutSeconds: int | None = None
    decision: Literal["approved", "rejected"] | None = None
    decidedBy: str | None = None
    decidedAt: str | None = None
    reason: str | None = None


class SignalWait(_Doc):
    """A wait_for_signal step: what it waits for, and (copied in when the
    run continues) its outcome. The outcome itself is a write-once record
    of its own (swamp.workflows.signals), never written here by a sender."""

    prompt: str | None = None
    requestedAt: str
    timeoutSeconds: int | None = None
    outcome: Literal["signalled", "timed_out"] | None = None
    message: Any = None
    by: str | None = None
    at: str | None = None


class AssertResult(_Doc):
    passed: bool
    severity: Literal["low", "medium", "high"]
    message: str | None = None
    failsRun: bool = False


class StepAttempt(_Doc):
    """One attempt of a step that may be retried (workflows/retries.py)."""

    number: int
    status: Literal["succeeded", "failed"]
    startedAt: str | None = None
    completedAt: str | None = None
    durationMs: int | None = None
    error: str | None = None
    stderrTail: str | None = None
    outputId: str | None = None


class StepRun(_Doc):
    name: str
    status: StepStatus = "pending"
    task: Literal["model_method", "workflow", "manual_approval", "assert", "wait_for_signal"]
    skipReason: SkipReason | None = None
    #: the declared step this one was expanded from (forEach), and its item
    forEachOf: str | None = None
    item: Any = None
    startedAt: str | None = None
    completedAt: str | None = None
    durationMs: int | None = None
    model: str | None = None
    method: str | None = None
    outputId: str | None = None
    dataArtifacts: list[dict] = Field(default_factory=list)
    childWorkflow: str | None = None
    childWorkflowId: str | None = None
    childRunId: str | None = None
    approval: Approval | None = None
    signal: SignalWait | None = None
    assertResult: AssertResult | None = None
    allowedFailure: bool | None = None
    error: str | None = None
    #: a failed command's last lines of stderr (command/shell), apart from its short error
    stderrTail: str | None = None
    detail: str | None = None  # why a step was skipped, in words
    worker: str | None = None  # the worker that ran a placed step
    #: a step that may be retried: the attempt running (or the last one), of how many, and each one's outcome
    attempt: int | None = None
    maxAttempts: int | None = None
    attempts: list[StepAttempt] = Field(default_factory=list)
    #: a re-run (--from-failed): the run whose outcome of this step is kept, not run again
    reusedFrom: str | None = None

    @property
    def declared(self) -> str:
        return self.forEachOf or self.name

    @property
    def attempt_note(self) -> str | None:
        """"attempt 3/3" once a step was tried more than once, for tables."""
        if self.attempt and self.maxAttempts and self.attempt > 1:
            return f"attempt {self.attempt}/{self.maxAttempts}"
        return None

    def to_json(self) -> dict:
        out = self.model_dump(exclude_none=True, exclude_defaults=False)
        if not self.dataArtifacts:
            out.pop("dataArtifacts", None)
        if not self.attempts:
            out.pop("attempts", None)
        if self.forEachOf is None:
            out.pop("item", None)
        return out


class JobRun(_Doc):
    name: str
    status: StepStatus = "pending"
    skipReason: SkipReason | None = None
    startedAt: str | None = None
    completedAt: str | None = None
    steps: list[StepRun] = Field(default_factory=list)

    def to_json(self) -> dict:
        out = self.model_dump(exclude_none=True, exclude={"steps"})
        out["steps"] = [s.to_json() for s in self.steps]
        return out


class Resumption(_Doc):
    """One continuation of a run (``workflow resume``, an approval that
    continues it): when, by whom, from which step (``--from``; None: a
    suspended run continued where it waited) and what the run was before."""

    at: str
    by: str | None = None
    fromStep: str | None = None
    was: RunStatus


class WorkflowRun(_Doc):
    id: str
    workflowId: str
    workflowName: str
    workflowVersion: int = 1
    status: RunStatus = "pending"
    startedAt: str
    completedAt: str | None = None
    durationMs: int | None = None
    inputKeys: list[str] = Field(default_factory=list)
    #: the input values, kept only while the run is suspended (resume needs them)
    inputs: dict[str, Any] | None = None
    failOn: Literal["low", "medium", "high"] = "low"
    tags: dict[str, str] = Field(default_factory=dict)
    parentRunId: str | None = None
    #: the failed run this one re-runs (--from-failed): its succeeded steps were kept, not run again
    rerunOf: str | None = None
    parentWorkflowId: str | None = None
    depth: int = 0
    #: who started it, who last continued it, who cancelled it (util/actors.py)
    initiatedBy: str | None = None
    resumedBy: str | None = None
    cancelledBy: str | None = None
    #: every resume of this run, oldest first (None: never resumed)
    resumes: list[Resumption] | None = None
    host: str | None = None
    pid: int | None = None
    failedStep: str | None = None
    failureReason: str | None = None
    #: the failed step's stderrTail (a command's last lines of stderr), beside failureReason
    failureStderrTail: str | None = None
    logFile: str | None = None
    jobs: list[JobRun] = Field(default_factory=list)

    def to_json(self) -> dict:
        out = self.model_dump(exclude_none=True, exclude={"jobs"})
        out["jobs"] = [j.to_json() for j in self.jobs]
        return out

    def job(self, name: str) -> JobRun:
        for j in self.jobs:
            if j.name == name:
                return j
        raise NotFoundError(f"run {self.id} has no job {name!r}")

    def steps(self) -> Iterator[tuple[JobRun, StepRun]]:
        for j in self.jobs:
            for s in j.steps:
                yield j, s


def run_dir(workflow_id: str) -> str:
    return f"{RUNS}/{workflow_id}"


def record_path(workflow_id: str, run_id: str) -> str:
    return f"{run_dir(workflow_id)}/workflow-run-{run_id}.yaml"


def log_path(workflow_id: str, run_id: str) -> str:
    return f"{run_dir(workflow_id)}/workflow-run-{run_id}.log"


def cancel_path(workflow_id: str, run_id: str) -> str:
    """A cancel request for a run that another process is running."""
    return f"{run_dir(workflow_id)}/workflow-run-{run_id}.cancel"


def run_lock(run_id: str) -> str:
    return f"workflow-run/{run_id}"


def dump(run: WorkflowRun) -> bytes:
    """The record as stored: vault references shown as the expressions that
    made them (a sentinel's token means nothing outside its process), and
    any secret value redacted. Written as JSON, which is YAML too: a record
    is rewritten as its run goes, and a YAML emitter takes half a second
    for a thousand steps where JSON takes ten milliseconds."""
    import json

    return redact_text(describe_sentinels(json.dumps(run.to_json(), indent=2, ensure_ascii=False))).encode() + b"\n"


def _parse(text: str, rel: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return yamlio.loads(text, rel)  # edited by hand as YAML


def readable(value: Any) -> Any:
    """``value`` with vault references shown as expressions, for output."""
    if isinstance(value, str):
        return describe_sentinels(value)
    if isinstance(value, dict):
        return {k: readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


def write(ds: Datastore, workflow_id: str, run_id: str, record: bytes, log_text: str | None = None) -> None:
    """Write a dumped record (and the log when given), each atomically; the
    log first, so a record never names a log that is not there."""
    if log_text is not None:
        ds.write_bytes(log_path(workflow_id, run_id), redact_text(log_text).encode())
    ds.write_bytes(record_path(workflow_id, run_id), record)


def save(ds: Datastore, run: WorkflowRun) -> None:
    write(ds, run.workflowId, run.id, dump(run))


def load(ds: Datastore, workflow_id: str, run_id: str) -> WorkflowRun:
    rel = record_path(workflow_id, run_id)
    try:
        text = ds.read_bytes(rel).decode()
    except NotFoundError:
        raise NotFoundError(f"no run {run_id!r} of this workflow",
                            hint="list runs with 'swamp workflow history NAME'") from None
    return documents.validate(WorkflowRun, _parse(text, rel), rel)


def read_log(ds: Datastore, workflow_id: str, run_id: str) -> str:
    try:
        return ds.read_bytes(log_path(workflow_id, run_id)).decode()
    except NotFoundError:
        return ""


def run_ids(ds: Datastore, workflow_id: str) -> list[str]:
    prefix, suffix = "workflow-run-", ".yaml"
    return sorted(n[len(prefix):-len(suffix)] for n in ds.listdir(run_dir(workflow_id))
                  if n.startswith(prefix) and n.endswith(suffix))


def history(ds: Datastore, workflow_id: str) -> list[WorkflowRun]:
    """Every run of a workflow, newest first."""
    runs = [load(ds, workflow_id, rid) for rid in run_ids(ds, workflow_id)]
    runs.sort(key=lambda r: (r.startedAt, r.id), reverse=True)
    return runs


def latest(ds: Datastore, workflow_id: str, *, status: str | None = None) -> WorkflowRun:
    for run in history(ds, workflow_id):
        if status is None or run.status == status:
            return run
    what = f"{status} run" if status else "run"
    raise NotFoundError(f"this workflow has no {what}", hint="list runs with 'swamp workflow history NAME'")


def all_runs(ds: Datastore) -> list[WorkflowRun]:
    """Every run of every workflow, newest first."""
    runs = [load(ds, wid, rid) for wid in ds.listdir(RUNS) for rid in run_ids(ds, wid)]
    runs.sort(key=lambda r: (r.startedAt, r.id), reverse=True)
    return runs


def find_run(ds: Datastore, run_id: str) -> WorkflowRun:
    """A run of any workflow by its id, or by the one id that starts with it."""
    if len(run_id) < 4:
        raise NotFoundError(f"no workflow run with id {run_id!r}",
                            hint="give the id, or at least its first 4 characters")
    found = [(wid, rid) for wid in ds.listdir(RUNS) for rid in run_ids(ds, wid) if rid.startswith(run_id)]
    exact = [f for f in found if f[1] == run_id]
    if exact or len(found) == 1:
        return load(ds, *(exact or found)[0])
    if found:
        raise ConflictError(f"{run_id!r} is the start of {len(found)} run ids", hint="give more of the id")
    raise NotFoundError(f"no workflow run with id {run_id!r}", hint="list runs with 'swamp workflow history search'")
