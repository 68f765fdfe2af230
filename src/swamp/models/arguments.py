"""Resolving a method's arguments: definition values, inputs, expressions,
then the type's schema. The one place expressions in definitions are
evaluated, so the expression engine plugs in here."""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel

from swamp.errors import ValidationError
from swamp.models.api import ModelType
from swamp.models.definitions import Definition
from swamp.models.inputs import CliString, coerce_field, validate_inputs
from swamp.util.documents import format_errors

#: (value, variables, source, field) -> value with ${{ }} evaluated.
Renderer = Callable[[Any, dict, str, str], Any]


def _verbatim(value: Any, variables: dict, source: str, field: str) -> Any:
    return value


def check_inputs(definition: Definition, model_type: ModelType, method: str, inputs: dict | None) -> dict:
    """The inputs a run of ``method`` uses, validated: against the
    definition's declared inputs, or else each one as the argument of the
    same name (an unknown name is refused, not dropped). Evaluates no
    expression, so it can run before a command takes any lease."""
    inputs = dict(inputs or {})
    if definition.inputs is not None:
        return validate_inputs(definition.inputs, inputs, what=f"inputs of model {definition.name!r}")
    schema_model = model_type.arguments_model(method)
    fields = schema_model.model_fields
    props = schema_model.model_json_schema().get("properties", {})
    unknown = [k for k in inputs if k not in fields]
    if unknown:
        from swamp.util.names import did_you_mean

        raise ValidationError(
            f"model {definition.name!r} method {method!r}: unknown input(s) {', '.join(sorted(unknown))}",
            hint=did_you_mean(unknown[0], fields) or f"arguments: {', '.join(sorted(fields))}",
        )
    try:
        used = {k: coerce_field(k, v, props.get(k)) for k, v in inputs.items()}
    except ValidationError as e:
        raise ValidationError(f"model {definition.name!r} method {method!r}: invalid input {e.message}") from None
    used = {k: str(v) if isinstance(v, CliString) else v for k, v in used.items()}
    for k, v in used.items():
        _check_field(definition, method, schema_model, k, v)
    return used


def _check_field(definition: Definition, method: str, schema_model: type[BaseModel], key: str, value) -> None:
    """An input's value against its argument's type, now: a wrongly typed
    input fails before anything is written (and, in a batch, before any run).
    A value holding an expression is checked once it is resolved."""
    from pydantic import TypeAdapter, ValidationError as PydanticError

    from swamp.expr import has_expressions

    if has_expressions(value):
        return
    field = schema_model.model_fields[key]
    try:
        TypeAdapter(field.annotation).validate_python(value, strict=False)
    except PydanticError as e:
        problem = e.errors()[0]["msg"] if e.errors() else str(e)
        raise ValidationError(f"model {definition.name!r} method {method!r}: invalid input {key}: {problem}") from None


def resolve_arguments(
    definition: Definition,
    model_type: ModelType,
    method: str,
    inputs: dict | None = None,
    *,
    source: str = "",
    variables: dict | None = None,
    renderer: Renderer | None = None,
) -> tuple[BaseModel, dict]:
    """Return (validated arguments, the inputs used)."""
    schema_model = model_type.arguments_model(method)
    raw: dict = {**definition.globalArguments}
    mcfg = definition.methods.get(method)
    if mcfg is not None:
        raw.update(mcfg.arguments)
    used_inputs = check_inputs(definition, model_type, method, inputs)
    if definition.inputs is None:
        raw.update(used_inputs)  # each input overrides the argument of the same name
    ctx_vars = {
        "inputs": used_inputs,
        "self": {"name": definition.name, "id": definition.id, "version": definition.version,
                 "tags": definition.tags, "globalArguments": definition.globalArguments},
        **(variables or {}),
    }
    render = renderer or _verbatim
    resolved = render(raw, ctx_vars, source or f"models/{definition.type}/{definition.name}.yaml",
                      "globalArguments")
    from pydantic import ValidationError as PydanticError

    try:
        args = schema_model.model_validate(resolved)
    except PydanticError as e:
        msg, hint = format_errors(e, schema_model)
        raise ValidationError(f"model {definition.name!r} method {method!r}: invalid arguments: {msg}",
                              hint=hint) from None
    return args, used_inputs
