"""Workflow signals: a ``wait_for_signal`` step waits for a JSON message
from outside (a person, a webhook, another system), then the run continues
with that message as data (``${{ steps.NAME.signal }}``).

A wait is settled by ONE outcome record, written once and never changed:
``workflow-runs/<workflowId>/workflow-run-<runId>.signals/<job>/<step>/<since>.json``
(``since``: when the wait began, so a step restarted by ``resume --from``
waits afresh).
A sender never edits the run record. Of two senders racing, or a sender
racing the timeout, the first to create the record wins: the application
layer creates it under the wait's lease after a pull, the same claim
mechanism a serve schedule uses for a cron tick (``app/schedules.py``), and
a loser is told who settled the wait. When the run continues, the engine
copies the outcome into the step (under the run's own lease).

Under serve, the replica that claims a wait's ``resumed`` marker (the same
way, create-only under the same lease) resumes the run, so a signalled or
expired wait resumes its run once however many replicas serve. The marker
names the claim's attempt (app/signals.py): a claim never published is
taken back, a failed resume withdraws it, and one whose claimer is gone is
claimed again."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from swamp.datastore.base import Datastore
from swamp.errors import ConflictError, NotFoundError, ValidationError
from swamp.models.inputs import _check
from swamp.util import clock
from swamp.util.names import did_you_mean
from swamp.util.problems import Problem
from swamp.workflows import records
from swamp.workflows.records import JobRun, StepRun, WorkflowRun

_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def lease_name(run_id: str) -> str:
    """The lease under which a run's waits are settled and claimed."""
    return f"workflow-signal/{run_id}"


def _segment(name: str) -> str:
    if _SAFE.match(name) and name not in (".", ".."):
        return name
    return "x-" + hashlib.sha256(name.encode()).hexdigest()[:24]


def wait_dir(workflow_id: str, run_id: str) -> str:
    return f"{records.run_dir(workflow_id)}/workflow-run-{run_id}.signals"


def _stamp(since: str) -> str:
    return re.sub(r"\D", "", since) or "0"


def outcome_path(workflow_id: str, run_id: str, job: str, step: str, since: str) -> str:
    """Where the outcome of the wait that began at ``since`` (its
    ``requestedAt``) is kept: a step restarted by ``resume --from`` waits
    again, afresh."""
    return f"{wait_dir(workflow_id, run_id)}/{_segment(job)}/{_segment(step)}/{_stamp(since)}.json"


def resumed_path(workflow_id: str, run_id: str, job: str, step: str, since: str) -> str:
    return f"{wait_dir(workflow_id, run_id)}/{_segment(job)}/{_segment(step)}/{_stamp(since)}.resumed.json"


# ----------------------------------------------------------------- outcomes
def read_outcome(ds: Datastore, workflow_id: str, run_id: str, job: str, step: str, since: str) -> dict | None:
    try:
        return json.loads(ds.read_bytes(outcome_path(workflow_id, run_id, job, step, since)))
    except NotFoundError:
        return None


def outcome_doc(run: WorkflowRun, job: str, step: str, since: str, outcome: str, message: Any, by: str) -> dict:
    return {"workflowName": run.workflowName, "workflowId": run.workflowId, "runId": run.id, "job": job,
            "step": step, "requestedAt": since, "outcome": outcome, "message": message, "by": by,
            "at": clock.isoformat()}


def create_outcome(ds: Datastore, doc: dict) -> None:
    """Write the outcome; the caller holds the wait's lease and has just
    found no outcome after its pull (``read_outcome``)."""
    rel = outcome_path(doc["workflowId"], doc["runId"], doc["job"], doc["step"], doc["requestedAt"])
    ds.write_bytes(rel, json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n")


def describe(outcome: dict) -> str:
    """Who settled a wait, and how, in words."""
    if outcome.get("outcome") == "timed_out":
        return f"timed out at {outcome.get('at')} (noticed by {outcome.get('by')})"
    return f"signalled by {outcome.get('by')} at {outcome.get('at')}"


# ------------------------------------------------------------------- waits
def deadline(wait) -> float | None:
    if not wait.timeoutSeconds:
        return None
    return clock.parse_iso(wait.requestedAt).timestamp() + wait.timeoutSeconds


def expired(wait, now: float | None = None) -> bool:
    d = deadline(wait)
    return d is not None and (clock.now() if now is None else now) > d


def deadline_iso(wait) -> str | None:
    d = deadline(wait)
    return None if d is None else clock.isoformat(d)


def waiting(ds: Datastore, run: WorkflowRun) -> list[tuple[WorkflowRun, JobRun, StepRun]]:
    """The signal waits of ``run`` still open in its record, its suspended
    nested runs' included, as (the run that owns the step, job, step)."""
    out = []
    for j, s in run.steps():
        if s.status == "waiting_signal" and s.signal is not None and s.signal.outcome is None:
            out.append((run, j, s))
        elif s.status == "waiting_approval" and s.childRunId and s.childWorkflowId:
            try:
                child = records.load(ds, s.childWorkflowId, s.childRunId)
            except NotFoundError:
                continue
            if child.status in ("suspended", "running"):
                out += waiting(ds, child)
    return out


def find_wait(ds: Datastore, run: WorkflowRun, step: str) -> tuple[WorkflowRun, str, str]:
    """The open wait named ``step`` (STEP or JOB/STEP) in ``run`` or a
    nested run it waits on: (owner run, job, step)."""
    found = waiting(ds, run)
    for owner, j, s in found:
        if step in (s.name, f"{j.name}/{s.name}"):
            return owner, j.name, s.name
    open_ = sorted(f"{j.name}/{s.name}" for _, j, s in found)
    for j, s in run.steps():  # settled, or not reached yet: say which
        if step in (s.name, f"{j.name}/{s.name}") and s.task == "wait_for_signal":
            if s.signal is not None and s.signal.outcome is not None:
                raise ConflictError(f"step {j.name}/{s.name} of run {run.id} was already settled: "
                                    + describe(s.signal.model_dump()))
            raise NotFoundError(f"step {j.name}/{s.name} of run {run.id} is {s.status}, not waiting for a signal",
                                hint="a signal is taken once the run reaches the step; see 'swamp workflow signals'")
    raise NotFoundError(
        f"run {run.id} has no step {step!r} waiting for a signal",
        hint=(did_you_mean(step, open_ + [w.split('/', 1)[1] for w in open_])
              or (f"waiting: {', '.join(open_)}" if open_ else "no step of this run waits for a signal")))


def step_definition(wf, job: str, step: StepRun):
    """The declared step of a (possibly forEach-expanded) step entry."""
    for j in wf.jobs:
        if j.name == job:
            for s in j.steps:
                if s.name == step.declared:
                    return s
    raise NotFoundError(f"workflow {wf.name!r} has no step {job}/{step.declared}")


# --------------------------------------------------------------- messages
def check_message(schema: dict | None, message: Any, where: str) -> None:
    """Refuse a message that does not match the step's schema, with the
    schema's own words."""
    if not isinstance(message, dict):
        raise ValidationError(f"the message for {where} must be a JSON object, not {_json_kind(message)}",
                              hint="e.g. --data '{\"version\": \"1.4.2\"}'; nothing was recorded")
    if schema is None:
        return
    problem = _check(message, schema)
    if problem:
        raise ValidationError(f"the message for {where} does not match its schema: {problem}",
                              hint="nothing was recorded; the run still waits. See the step's 'schema' "
                                   "in the workflow file")


def _json_kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "true or false", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


# ----------------------------------------------------------- validation
_STEPS_REF = re.compile(r"\bsteps\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")
_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")


def review(wf, step_texts) -> list[Problem]:
    """Problems of a workflow's signal waits and of its ``steps.NAME``
    references (``step_texts``: (field, expression text) pairs)."""
    problems = []
    waits = set()
    for i, job in enumerate(wf.jobs):
        for k, step in enumerate(job.steps):
            t = step.task
            if t.type != "wait_for_signal":
                continue
            waits.add(step.name)
            where = f"jobs[{i}].steps[{k}].task"
            if t.onTimeout == "continue" and not isinstance(t.default, dict):
                problems.append(Problem(f"{where}.default", "the message a timeout gives is a map, like a signal's"))
            if t.signalSchema is not None:
                problems += _schema_problems(t.signalSchema, f"{where}.schema")
                if t.onTimeout == "continue" and isinstance(t.default, dict):
                    mismatch = _check(t.default, t.signalSchema)  # the schema's own words, as a signal gets them
                    if mismatch:
                        problems.append(Problem(f"{where}.default", mismatch))
    for field, text in step_texts:
        for name in sorted({a or b for a, b in _STEPS_REF.findall(text)}):
            if name not in waits:
                hint = did_you_mean(name, waits) or (f"steps that wait for a signal: {', '.join(sorted(waits))}"
                                                      if waits else "this workflow has no wait_for_signal step")
                problems.append(Problem(field, f"steps.{name} names no wait_for_signal step ({hint})"))
    return problems


def _schema_problems(schema: Any, where: str) -> list[Problem]:
    out = []

    def walk(node: Any, at: str) -> None:
        if not isinstance(node, dict):
            out.append(Problem(at, "a schema is a map such as {type: object}"))
            return
        want = node.get("type")
        for w in (want if isinstance(want, list) else [want] if want is not None else []):
            if w not in _TYPES:
                out.append(Problem(f"{at}.type", f"{w!r} is not a JSON type ({', '.join(_TYPES)})"))
        for key, sub in (node.get("properties") or {}).items():
            walk(sub, f"{at}.properties.{key}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{at}.items")
        req = node.get("required")
        if req is not None and not (isinstance(req, list) and all(isinstance(r, str) for r in req)):
            out.append(Problem(f"{at}.required", "a list of property names"))

    walk(schema, where)
    return out
