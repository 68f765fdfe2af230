"""Static checks of a workflow, for `workflow validate` and before a run
writes anything: the DAGs, every expression compiles, `self` only where a
forEach sets it, and whatever names are literal (models, methods, nested
workflows, input keys) exist."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterator

from swamp.errors import NotFoundError, SwampError
from swamp.expr.template import has_expressions
from swamp.models.definitions import find_definition
from swamp.models.registry import registry_for
from swamp.models.shell_injection import warning
from swamp.util.names import did_you_mean
from swamp.util.problems import Problem
from swamp.workflows import dag, signals
from swamp.workflows.files import find_workflow
from swamp.workflows.gates import ungated_warnings
from swamp.workflows.schema import Step, Workflow, workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo

_SELF = re.compile(r"\bself\b(?:\.([A-Za-z_]\w*))?")


def check_workflow(repo: Repo, wf: Workflow) -> list[Problem]:
    """The errors that keep ``wf`` from running."""
    return review_workflow(repo, wf)[0]


def review_workflow(repo: Repo, wf: Workflow) -> tuple[list[Problem], list[str]]:
    """(errors, warnings: lines). A step naming a model that does not exist (yet)
    is a warning: the workflow may be written before the model, and a run
    fails only that step."""
    problems = dag.check_structure(wf)
    problems += expression_problems(wf)
    problems += input_reference_problems(wf)
    problems += signal_problems(wf)
    errors, warnings = reference_problems(repo, wf)

    return problems + errors, warnings + shell_warnings(repo, wf) + ungated_warnings(wf)


def shell_warnings(repo: Repo, wf: Workflow) -> list[str]:
    """A step handing a command/shell model a `run` that pastes a value
    (an input, data, a forEach item) into the command
    (models/shell_injection.py)."""
    out = []
    for i, job in enumerate(wf.jobs):
        for k, step in enumerate(job.steps):
            t = step.task
            if t.type != "model_method" or _type_of(repo, t) != "command/shell":
                continue
            where = f"jobs[{i}].steps[{k}].task"
            for field, args in (("inputs", t.inputs), ("globalArgs", t.globalArgs)):
                w = warning(f"{where}.{field}.run", args.get("run")) if isinstance(args, dict) else None
                if w:
                    out.append(w)
    return out


def _type_of(repo: Repo, t) -> str | None:
    if t.modelType is not None:
        return t.modelType if _literal(t.modelType) else None
    if not _literal(t.modelIdOrName):
        return None

    try:
        return find_definition(repo, t.modelIdOrName)[1].type
    except SwampError:
        return None


_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_INPUT_REF = re.compile(r"\binputs\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")


def input_reference_problems(wf: Workflow) -> list[Problem]:
    """An expression reading an input the workflow does not declare: it
    would be an error at run time, so it is one now."""
    declared = set(((wf.inputs or {}).get("properties") or {}))
    problems = []
    for i, job in enumerate(wf.jobs):
        for k, step in enumerate(job.steps):
            for field, value, bare in _step_fields(step, f"jobs[{i}].steps[{k}]"):
                text = _text_of(value)
                code = text if bare else " ".join(_EXPRESSION.findall(text))  # plain text may say "inputs."
                for name in sorted({a or b for a, b in _INPUT_REF.findall(code)}):
                    if name not in declared:
                        hint = did_you_mean(name, declared) or (
                            f"declared inputs: {', '.join(sorted(declared))}" if declared
                            else "this workflow declares no inputs")
                        problems.append(Problem(field, f"input {name!r} is not declared ({hint})"))
    return problems


def signal_problems(wf: Workflow) -> list[Problem]:
    """wait_for_signal steps (their schema, their default) and the
    ``steps.NAME`` references that read their messages."""
    texts = []
    for i, job in enumerate(wf.jobs):
        for k, step in enumerate(job.steps):
            for field, value, bare in _step_fields(step, f"jobs[{i}].steps[{k}]"):
                text = _text_of(value)
                texts.append((field, text if bare else " ".join(_EXPRESSION.findall(text))))
    return signals.review(wf, texts)


def _text_of(value: Any) -> str:
    """Every string inside a field's value, for a textual scan."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(_text_of(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_text_of(v) for v in value)
    return ""


def _step_fields(step: Step, where: str) -> Iterator[tuple[str, Any, bool]]:
    """(field path, value, is bare CEL) of everything a step evaluates."""
    yield f"{where}.name", step.name, False
    if step.forEach is not None:
        yield f"{where}.forEach.in", step.forEach.in_, False
    if isinstance(step.guard, str):
        yield f"{where}.guard", step.guard, not has_expressions(step.guard)
    t = step.task
    for key in ("modelIdOrName", "modelType", "modelName", "globalArgs", "methodName", "workflowIdOrName",
                "inputs", "prompt", "message"):
        value = getattr(t, key)
        if value is not None:
            yield f"{where}.task.{key}", value, False
    if isinstance(t.expr, str):
        yield f"{where}.task.expr", t.expr, not has_expressions(t.expr)


def expression_problems(wf: Workflow) -> list[Problem]:
    from swamp.models import expressions as expr  # the bridge: knows the data and vault namespaces

    problems = []
    for i, job in enumerate(wf.jobs):
        for k, step in enumerate(job.steps):
            where = f"jobs[{i}].steps[{k}]"
            for field, value, bare in _step_fields(step, where):
                if bare:
                    value = f"${{{{ {value} }}}}"
                errors = expr.validate(value, field=field)
                problems += [e.problem() for e in errors]
                if not errors and (bare or has_expressions(value)):
                    problems += _self_problems(step, field, value, field == f"{where}.forEach.in")
    return problems


def _self_problems(step: Step, field: str, value: Any, is_in: bool) -> list[Problem]:
    text = str(value)
    out = []
    for m in _SELF.finditer(text):
        if step.forEach is None or is_in:
            out.append(Problem(field, "'self' is only set in a forEach step's name, guard and task"
                               if is_in else "'self' is only set in a forEach step"))
            break
        if m.group(1) and m.group(1) != step.forEach.item:
            out.append(Problem(field, f"this step's item is self.{step.forEach.item}, not self.{m.group(1)}"))
            break
    return out


def reference_problems(repo: Repo, wf: Workflow) -> tuple[list[Problem], list[str]]:
    registry = registry_for(repo)
    problems, warnings = [], []
    for i, job in enumerate(wf.jobs):
        for k, step in enumerate(job.steps):
            where = f"jobs[{i}].steps[{k}].task"
            t = step.task
            try:
                if t.type == "model_method":
                    problems += _method_problems(repo, registry, t, where)
                    problems += _override_problems(repo, registry, wf, step, f"jobs[{i}].steps[{k}]")
                elif t.type == "workflow":
                    problems += _workflow_problems(repo, wf, t, where)
            except _MissingModel as e:
                warnings.append(f"{where}.modelIdOrName: {e.message}; a run fails this step until it exists"
                                + (f" ({e.hint})" if e.hint else ""))
            except SwampError as e:
                problems.append(Problem(where, e.message + (f" ({e.hint})" if e.hint else "")))
    return problems, warnings


class _MissingModel(SwampError):
    """A step names a model that has no definition (yet)."""


def _literal(value: Any) -> bool:
    return isinstance(value, str) and not has_expressions(value)


def _method_problems(repo: Repo, registry, t, where: str) -> list[Problem]:
    if t.modelType is not None:
        return _direct_problems(registry, t, where)
    if not _literal(t.modelIdOrName):
        return []
    try:
        _, d = find_definition(repo, t.modelIdOrName)
    except NotFoundError as e:
        raise _MissingModel(e.message, hint=e.hint) from None
    model_type = registry.get(d.type)
    if not _literal(t.methodName):
        return []
    if t.methodName not in model_type.methods:
        hint = did_you_mean(t.methodName, model_type.methods)
        return [Problem(f"{where}.methodName", f"model type {d.type!r} has no method {t.methodName!r}"
                        + (f" ({hint})" if hint else ""))]
    if not isinstance(t.inputs, (dict, type(None))):
        return []
    given = set(t.inputs or {})
    fields = model_type.arguments_model(t.methodName).model_fields
    if d.inputs is not None:
        # As a run routes them: a declared input, else an argument's value;
        # a required input only when the method's arguments read it.
        from swamp.models.arguments import method_values, referenced_inputs

        schema = dict(d.inputs)
        used = referenced_inputs(method_values(d, t.methodName))
        if used is not None:
            schema["required"] = [r for r in schema.get("required") or [] if r in used]
        props = schema.get("properties") or {}
        as_inputs = {k for k in given if k in props or k not in fields}
        return _input_problems(schema, as_inputs, f"{where}.inputs", f"model {d.name!r}")
    return [Problem(f"{where}.inputs.{key}", f"model {d.name!r} takes no input {key!r}"
                    + (f" ({did_you_mean(key, fields)})" if did_you_mean(key, fields) else ""))
            for key in sorted(given - set(fields))]


def _direct_problems(registry, t, where: str) -> list[Problem]:
    """A step running a type directly: the type and its method exist, and
    every input and global argument is one of theirs."""
    if not _literal(t.modelType):
        return []
    model_type = registry.get(t.modelType)
    if not _literal(t.methodName):
        return []
    if t.methodName not in model_type.methods:
        hint = did_you_mean(t.methodName, model_type.methods)
        return [Problem(f"{where}.methodName", f"model type {t.modelType!r} has no method {t.methodName!r}"
                        + (f" ({hint})" if hint else ""))]
    out = []
    fields = model_type.arguments_model(t.methodName).model_fields
    for key, given in (("inputs", t.inputs), ("globalArgs", t.globalArgs)):
        if isinstance(given, dict):
            allowed = fields if key == "inputs" else model_type.global_arguments.model_fields
            for k in sorted(set(given) - set(allowed)):
                hint = did_you_mean(k, allowed)
                out.append(Problem(f"{where}.{key}.{k}",
                                   f"{t.modelType} takes no argument {k!r}" + (f" ({hint})" if hint else "")))
    return out


def _override_problems(repo: Repo, registry, wf: Workflow, step, where: str) -> list[Problem]:
    """dataOutputOverrides name specs the model's type declares, and vary
    names inputs of the step or of the workflow."""
    if not step.dataOutputOverrides:
        return []
    out = []
    declared_inputs = set(((wf.inputs or {}).get("properties") or {}))
    step_inputs = set(step.task.inputs or {}) if isinstance(step.task.inputs, dict) else None
    specs = None
    if _literal(step.task.modelType):
        model_type = registry.get(step.task.modelType)
        specs = set(model_type.resources) | set(model_type.files)
    elif _literal(step.task.modelIdOrName):
        try:
            d = find_definition(repo, step.task.modelIdOrName)[1]
            model_type = registry.get(d.type)
            specs = set(model_type.resources) | set(model_type.files)
        except NotFoundError:
            specs = None  # reported (as a warning) by the task's own check
    for n, o in enumerate(step.dataOutputOverrides):
        at = f"{where}.dataOutputOverrides[{n}]"
        if specs is not None and o.specName not in specs:
            hint = did_you_mean(o.specName, specs)
            out.append(Problem(f"{at}.specName", f"the model's type declares no spec {o.specName!r}"
                               + (f" ({hint})" if hint else "")))
        for key in o.vary:
            if key not in declared_inputs and (step_inputs is not None and key not in step_inputs):
                out.append(Problem(f"{at}.vary", f"{key!r} is neither an input of the step nor of the workflow"))
    return out


def _input_problems(schema: dict, given: set[str], where: str, what: str) -> list[Problem]:
    props = schema.get("properties") or {}
    out = []
    if not schema.get("additionalProperties", False):
        for key in sorted(given - set(props)):
            hint = did_you_mean(key, props)
            out.append(Problem(f"{where}.{key}", f"{what} declares no input {key!r}" + (f" ({hint})" if hint else "")))
    for key in schema.get("required") or []:
        if key not in given and "default" not in (props.get(key) or {}):
            out.append(Problem(where, f"{what} requires input {key!r}"))
    return out


def _workflow_problems(repo: Repo, wf: Workflow, t, where: str) -> list[Problem]:
    if not _literal(t.workflowIdOrName):
        return []
    _, child = find_workflow(repo, t.workflowIdOrName)
    out = []
    if isinstance(t.inputs, (dict, type(None))) and child.inputs is not None:
        out += _input_problems(child.inputs, set(t.inputs or {}), f"{where}.inputs", f"workflow {child.name!r}")
    cycle = nesting_cycle(repo, wf, child)
    if cycle:
        out.append(Problem(where, f"workflow cycle: {' -> '.join(cycle)}"))
    return out


def nesting_cycle(repo: Repo, root: Workflow, child: Workflow) -> list[str] | None:
    """A path of literal nested-workflow references from ``child`` back to
    ``root``, as names, or None."""
    root_id = workflow_id(root)
    seen: set[str] = set()

    def visit(wf: Workflow, path: list[str]) -> list[str] | None:
        if workflow_id(wf) == root_id:
            return path
        if workflow_id(wf) in seen:
            return None
        seen.add(workflow_id(wf))
        for job in wf.jobs:
            for step in job.steps:
                ref = step.task.workflowIdOrName
                if step.task.type == "workflow" and _literal(ref):
                    try:
                        _, nxt = find_workflow(repo, ref)
                    except SwampError:
                        continue  # reported when that workflow is validated
                    found = visit(nxt, path + [nxt.name])
                    if found:
                        return found
        return None

    return visit(child, [root.name, child.name])
