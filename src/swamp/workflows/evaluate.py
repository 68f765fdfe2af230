"""`workflow evaluate`: the workflow as it would run with these inputs,
every expression resolved that can be resolved now, forEach steps shown as
their expansions. What cannot be resolved yet (data a step will write, an
input not given) stays as written and is listed under ``unresolved``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swamp.errors import SwampError
from swamp.expr.template import has_expressions
from swamp.workflows import foreach
from swamp.workflows.engine import validate_workflow_inputs
from swamp.workflows.expressions import UNSET, Scope
from swamp.workflows.records import readable
from swamp.workflows.schema import Step, Workflow, workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def evaluate_workflow(repo: Repo, wf: Workflow, source: str, inputs: dict) -> dict:
    unresolved: list[dict] = []
    try:
        values = validate_workflow_inputs(wf, inputs)
    except SwampError as e:
        values = {k: str(v) for k, v in inputs.items()}
        unresolved.append({"field": "inputs", "error": e.message})
    run_info = {"id": None, "workflowId": workflow_id(wf), "workflowName": wf.name, "startedAt": None,
                "tags": dict(wf.tags), "depth": 0}
    scope = Scope(repo, source, values, run_info)
    doc = wf.model_dump(exclude_none=True, by_alias=True)
    doc["id"] = workflow_id(wf)
    doc["inputs"] = values
    for i, job in enumerate(wf.jobs):
        steps = []
        for k, step in enumerate(job.steps):
            steps += _step(scope, step, doc["jobs"][i]["steps"][k], f"jobs[{i}].steps[{k}]", unresolved)
        doc["jobs"][i]["steps"] = steps
    doc["unresolved"] = unresolved
    return readable(doc)


def _render(scope: Scope, value: Any, field: str, item: Any, unresolved: list[dict]) -> Any:
    """Field by field, so one that cannot be resolved leaves the rest be."""
    if not has_expressions(value):
        return value
    if isinstance(value, dict):
        return {k: _render(scope, v, f"{field}.{k}", item, unresolved) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(scope, v, f"{field}[{i}]", item, unresolved) for i, v in enumerate(value)]
    try:
        return scope.render(value, field, item)
    except SwampError as e:
        unresolved.append({"field": field, "error": e.message})
        return value


def _step(scope: Scope, step: Step, raw: dict, where: str, unresolved: list[dict]) -> list[dict]:
    if step.forEach is None:
        return [_fields(scope, raw, where, UNSET, unresolved)]
    try:
        value = scope.render(step.forEach.in_, f"{where}.forEach.in")
        render_name = None
        if has_expressions(step.name):
            def render_name(item):
                return scope.render(step.name, f"{where}.name", {step.forEach.item: item})
        expansions = foreach.expand(step.name, value, render_name)
    except SwampError as e:
        unresolved.append({"field": f"{where}.forEach", "error": e.message})
        return [raw]
    out = []
    for x in expansions:
        entry = {k: v for k, v in raw.items() if k not in ("forEach", "name")}
        entry = _fields(scope, entry, where, {step.forEach.item: x.item}, unresolved)
        out.append({"name": x.name, "forEachOf": step.name, "item": x.item, **entry})
    return out


def _fields(scope: Scope, raw: dict, where: str, item: Any, unresolved: list[dict]) -> dict:
    out = dict(raw)
    if "name" in out:
        out["name"] = _render(scope, out["name"], f"{where}.name", item, unresolved)
    if isinstance(out.get("guard"), str) and has_expressions(out["guard"]):
        out["guard"] = _render(scope, out["guard"], f"{where}.guard", item, unresolved)
    task = dict(out["task"])
    for key in ("modelIdOrName", "modelType", "modelName", "globalArgs", "methodName", "workflowIdOrName",
                "inputs", "prompt"):
        if key in task:
            task[key] = _render(scope, task[key], f"{where}.task.{key}", item, unresolved)
    out["task"] = task
    return out
