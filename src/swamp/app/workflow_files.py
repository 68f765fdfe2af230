"""Workflow files: create, read, search and validate them, check one before
a run, and the run record as commands print it. Running, resuming,
deciding and cancelling runs are ``app.workflows``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import SwampError, UsageError, ValidationError
from swamp.util.problems import joined
from swamp.app.validation_report import errors_of, set_errors
from swamp.workflows import records, runs, signals
from swamp.workflows.rerun import RERUNNABLE
from swamp.workflows.junit import junit_xml
from swamp.workflows.files import (create_workflow, file_name, find_workflow, find_workflow_file,
                                   iter_workflow_files, load_workflow, shown_path)
from swamp.workflows.records import WorkflowRun
from swamp.workflows.schema import SEVERITIES, Workflow, workflow_id
from swamp.workflows.validation import check_workflow, review_workflow

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def _rel(repo: Repo, path) -> str:
    return shown_path(repo, path)  # an extension's workflow is outside the repository


def create(repo: Repo, name: str) -> dict:
    path, wf = create_workflow(repo, name)
    return {"id": wf.id, "name": wf.name, "path": _rel(repo, path)}


def get(repo: Repo, name: str) -> dict:
    path, wf = find_workflow(repo, name)
    return {**wf.model_dump(exclude_none=True, by_alias=True), "id": workflow_id(wf), "path": _rel(repo, path)}


def require(repo: Repo, name: str) -> None:
    """Raise NotFoundError unless a workflow NAME exists (by name or id)."""
    find_workflow(repo, name)


def search(repo: Repo, query: str | None) -> list[dict]:
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


def validate(repo: Repo, name: str | None) -> dict:
    files = [find_workflow_file(repo, name)] if name else iter_workflow_files(repo)
    results = []
    for p in files:
        entry = {"name": file_name(p), "path": _rel(repo, p), "valid": True, "errors": [], "warnings": []}
        try:
            errors, entry["warnings"] = review_workflow(repo, load_workflow(p, repo.root))
        except SwampError as e:
            errors = errors_of(e, entry["path"], str(p))  # each schema error on its own line
        set_errors(entry, errors)
        results.append(entry)
    return {"valid": all(r["valid"] for r in results), "workflows": results}


def checked(repo: Repo, name: str) -> tuple[str, Workflow]:
    """Load and check a workflow before a run writes anything."""
    path, wf = find_workflow(repo, name)
    source = _rel(repo, path)
    problems = check_workflow(repo, wf)
    if problems:
        raise ValidationError(f"{source} is not valid: " + joined(problems),
                              hint=f"see 'swamp workflow validate {wf.name}'")
    return source, wf


def file_schema() -> dict:
    """The JSON Schema of a workflow file (`workflow schema get`)."""
    return Workflow.model_json_schema(by_alias=True)


def fail_on_level(value: str | None) -> str:
    if value is None:
        return "low"
    if value not in SEVERITIES:
        raise UsageError(f"--fail-on must be one of {', '.join(SEVERITIES)}")
    return value


def can_rerun(run: dict) -> bool:
    """Whether a run (its record as ``run_json`` prints it) can be re-run
    from its failure: a top-level run that failed, was cancelled or was
    interrupted (workflows/rerun.py; a nested run is not re-run on its own)."""
    return run["status"] in RERUNNABLE and not run.get("parentRunId")


def run_json(repo: Repo, run: WorkflowRun) -> dict:
    """The run record as commands print it: without the process details,
    and with the approvals and signals a suspended run waits for (nested
    runs' too)."""
    data = records.readable(run.to_json())
    for key in ("pid", "host"):
        data.pop(key, None)
    if run.status == "suspended":
        data["approvalRequired"] = records.readable([
            {"job": j.name, "step": s.name, "prompt": s.approval.prompt,
             **({"workflowName": owner.workflowName, "runId": owner.id} if owner.id != run.id else {})}
            for owner, j, s in runs.waiting_steps(repo.datastore, run)])
        waits = signals.waiting(repo.datastore, run)
        if waits:  # docs/signals.md
            data["signalRequired"] = records.readable([
                {"job": j.name, "step": s.name, "prompt": s.signal.prompt, "requestedAt": s.signal.requestedAt,
                 "deadline": signals.deadline_iso(s.signal),
                 **({"workflowName": owner.workflowName, "runId": owner.id} if owner.id != run.id else {})}
                for owner, j, s in waits])
    return data


def run_junit(run: WorkflowRun) -> str:
    """The run as JUnit XML (`workflow run --junit FILE`): a test case per step."""
    return junit_xml(run)
