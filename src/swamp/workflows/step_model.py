"""What a model_method step runs, rendered for its item: the model (a
definition found by name, or a type run directly), the method and its
inputs, and the step's data output overrides. Shared by a step run here
(task_method.py) and one run on a worker (task_placed.py)."""

from __future__ import annotations

from typing import Any

from swamp.errors import SwampError, ValidationError
from swamp.workflows.records import StepRun
from swamp.workflows.schema import Step


def find_model(ex, step: Step, e: StepRun, where: str, item: Any):
    from swamp.models.definitions import find_definition

    if step.task.modelType is not None:
        return direct_model(ex, step, e, where, item)
    model = ex.scope.render(step.task.modelIdOrName, f"{where}.task.modelIdOrName", item)
    if not isinstance(model, str):
        raise ValidationError("modelIdOrName must give a string")
    with ex.state.lock:
        e.model = model
    return find_definition(ex.engine.repo, model)[1]


def direct_model(ex, step: Step, e: StepRun, where: str, item: Any):
    """A step running a type directly (modelType, modelName): the
    hand-written definition of that name and type, or the automatic
    one with the step's globalArgs (saved in the step's session)."""
    from swamp.errors import ConflictError
    from swamp.models import auto_definitions
    from swamp.models.definition_files import iter_definition_files
    from swamp.models.definitions import load_definition

    task = step.task
    type_name = ex.scope.render(task.modelType, f"{where}.task.modelType", item)
    name = ex.scope.render(task.modelName, f"{where}.task.modelName", item)
    if not isinstance(type_name, str) or not isinstance(name, str):
        raise ValidationError("modelType and modelName must give strings")
    with ex.state.lock:
        e.model = name
    for path in iter_definition_files(ex.engine.repo):
        if path.stem == name:
            own = load_definition(path)
            if own.type != type_name:
                raise ConflictError(f"model {name!r} is a {own.type}, not a {type_name}")
            return own
    model_type = ex.engine.runner.registry.get(type_name)
    global_args = ex.scope.render(task.globalArgs, f"{where}.task.globalArgs", item) or {}
    if not isinstance(global_args, dict):
        raise ValidationError(f"globalArgs must give a map, not {type(global_args).__name__}")
    unknown = sorted(set(global_args) - set(model_type.global_arguments.model_fields))
    if unknown:
        raise ValidationError(f"{type_name} takes no global argument(s) {', '.join(unknown)}")
    definition = auto_definitions.updated(auto_definitions.find(ex.engine.repo, type_name, name),
                                          model_type, name, global_args)
    with ex.state.lock:
        ex.autos[definition.id] = definition
    return definition


def prepare_method(ex, step: Step, e: StepRun, where: str, item: Any, definition):
    task = step.task
    method = ex.scope.render(task.methodName, f"{where}.task.methodName", item)
    inputs = ex.scope.render(task.inputs, f"{where}.task.inputs", item) or {}
    if not isinstance(method, str):
        raise ValidationError("methodName must give a string")
    if not isinstance(inputs, dict):
        raise ValidationError(f"task inputs must give a map, not {type(inputs).__name__}")
    with ex.state.lock:
        e.method = method
    return ex.engine.runner.prepare(definition, method, inputs, variables={"run": ex.run_info})


def data_overrides(ex, step: Step, prepared) -> dict[str, dict]:
    """The step's dataOutputOverrides by spec name; each ``vary`` name is
    looked up in the step's inputs, then the workflow's."""
    out = {}
    for o in step.dataOutputOverrides:
        values = []
        for key in o.vary:
            if key in (prepared.used_inputs or {}):
                value = prepared.used_inputs[key]
            elif key in ex.inputs:
                value = ex.inputs[key]
            else:
                raise ValidationError(f"dataOutputOverrides of {o.specName!r}: vary names {key!r}, "
                                      "which is neither an input of the step nor of the workflow")
            values.append(str(value).lower() if isinstance(value, bool) else str(value))
        out[o.specName] = {"lifetime": o.lifetime, "garbageCollection": o.garbageCollection,
                           "tags": dict(o.tags), "suffix": "".join(f"-{v}" for v in values)}
    return out


def with_close_match(err: SwampError) -> str:
    """A step's error with the did-you-mean of its hint, as workflow validate says it."""
    close = err.hint if err.hint and err.hint.startswith("did you mean") else None
    return err.message + (f" ({close})" if close else "")
