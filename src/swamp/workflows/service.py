"""Workflow services the CLI calls: one function per command."""

from __future__ import annotations

from swamp.errors import SwampError, UsageError, ValidationError
from swamp.workflows import records, runs
from swamp.workflows.engine import Engine, Observer
from swamp.workflows.files import (create_workflow, file_name, find_workflow, find_workflow_file,
                                   iter_workflow_files, load_workflow)
from swamp.workflows.records import WorkflowRun
from swamp.workflows.schema import SEVERITIES, Workflow, workflow_id


def _rel(repo, path) -> str:
    return str(path.relative_to(repo.root))


def create(repo, name: str) -> dict:
    path, wf = create_workflow(repo, name)
    return {"id": wf.id, "name": wf.name, "path": _rel(repo, path)}


def get(repo, name: str) -> dict:
    path, wf = find_workflow(repo, name)
    return {**wf.model_dump(exclude_none=True, by_alias=True), "id": workflow_id(wf), "path": _rel(repo, path)}


def search(repo, query: str | None) -> list[dict]:
    q = (query or "").lower()
    out = []
    for p in iter_workflow_files(repo):
        try:
            wf = load_workflow(p, repo.root)
        except SwampError as e:
            out.append({"name": file_name(p), "path": _rel(repo, p), "error": e.message})
            continue
        if q in wf.name.lower() or q in (wf.description or "").lower():
            out.append({"id": workflow_id(wf), "name": wf.name, "description": wf.description or "",
                        "jobs": len(wf.jobs), "path": _rel(repo, p)})
    return sorted(out, key=lambda r: r["name"])


def validate(repo, name: str | None) -> dict:
    from swamp.workflows.validation import check_workflow

    files = [find_workflow_file(repo, name)] if name else iter_workflow_files(repo)
    results = []
    for p in files:
        entry = {"name": file_name(p), "path": _rel(repo, p), "valid": True, "errors": []}
        try:
            entry["errors"] = check_workflow(repo, load_workflow(p, repo.root))
        except SwampError as e:
            entry["errors"] = [e.message]
        entry["valid"] = not entry["errors"]
        results.append(entry)
    return {"valid": all(r["valid"] for r in results), "workflows": results}


def _checked(repo, name: str) -> tuple[str, Workflow]:
    """Load and check a workflow before a run writes anything."""
    from swamp.workflows.validation import check_workflow

    path, wf = find_workflow(repo, name)
    source = _rel(repo, path)
    problems = check_workflow(repo, wf)
    if problems:
        raise ValidationError(f"{source} is not valid: " + "; ".join(problems),
                              hint=f"see 'swamp workflow validate {wf.name}'")
    return source, wf


def _fail_on(value: str | None) -> str:
    if value is None:
        return "low"
    if value not in SEVERITIES:
        raise UsageError(f"--fail-on must be one of {', '.join(SEVERITIES)}")
    return value


def run(repo, name: str, inputs: dict, *, fail_on: str | None = None,
        observer: Observer | None = None) -> WorkflowRun:
    source, wf = _checked(repo, name)
    return Engine(repo, observer=observer).start(wf, source, inputs, fail_on=_fail_on(fail_on))


def resume(repo, name: str, run_id: str | None, inputs: dict, *, observer: Observer | None = None) -> WorkflowRun:
    source, wf = _checked(repo, name)
    ds = repo.datastore
    target = runs.pick(ds, workflow_id(wf), run_id, ("suspended",))
    engine = Engine(repo, observer=observer)
    values = engine.resumable(wf, target, inputs)  # a refusal leaves the run suspended
    claimed = runs.claim_for_resume(ds, target.workflowId, target.id)
    return engine.resume(wf, source, claimed, values)


def decide(repo, name: str, step: str, decision: str, run_id: str | None, reason: str | None) -> dict:
    _, wf = find_workflow(repo, name)
    return runs.decide(repo.datastore, workflow_id(wf), run_id, step, decision, reason)


def cancel(repo, name: str, run_id: str | None) -> dict:
    _, wf = find_workflow(repo, name)
    return runs.cancel(repo.datastore, workflow_id(wf), run_id)


def history(repo, name: str, limit: int | None = None) -> list[dict]:
    _, wf = find_workflow(repo, name)
    ds = repo.datastore
    with ds.session(mutating=False):
        found = records.history(ds, workflow_id(wf))
    rows = []
    for r in found[:limit] if limit else found:
        steps = [s for _, s in r.steps()]
        rows.append({"id": r.id, "workflowName": r.workflowName, "status": r.status, "startedAt": r.startedAt,
                     "completedAt": r.completedAt, "durationMs": r.durationMs,
                     "steps": len(steps), "failedSteps": sum(s.status == "failed" for s in steps)})
    return rows


def get_run(repo, name: str, run_id: str | None) -> WorkflowRun:
    _, wf = find_workflow(repo, name)
    ds = repo.datastore
    with ds.session(mutating=False):
        if run_id:
            return records.load(ds, workflow_id(wf), run_id)
        return records.latest(ds, workflow_id(wf))


def logs(repo, name: str, run_id: str | None) -> dict:
    run = get_run(repo, name, run_id)
    return {"id": run.id, "workflowName": run.workflowName, "status": run.status,
            "log": records.read_log(repo.datastore, run.workflowId, run.id)}


def evaluate(repo, name: str, inputs: dict) -> dict:
    from swamp.workflows.evaluate import evaluate_workflow

    path, wf = find_workflow(repo, name)
    with repo.datastore.session(mutating=False):  # expressions read data: pull once first
        doc = evaluate_workflow(repo, wf, _rel(repo, path), inputs)
    return {**doc, "path": _rel(repo, path)}


def run_json(repo, run: WorkflowRun) -> dict:
    """The run record as commands print it: without the process details,
    and with the approvals a suspended run waits for (nested runs' too)."""
    data = records.readable(run.to_json())
    for key in ("pid", "host"):
        data.pop(key, None)
    if run.status == "suspended":
        data["approvalRequired"] = records.readable([
            {"job": j.name, "step": s.name, "prompt": s.approval.prompt,
             **({"workflowName": owner.workflowName, "runId": owner.id} if owner.id != run.id else {})}
            for owner, j, s in runs.waiting_steps(repo.datastore, run)])
    return data
