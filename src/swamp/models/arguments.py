"""Resolving a method's arguments: definition values, inputs, expressions,
then the type's schema. The one place expressions in definitions are
evaluated, so the expression engine plugs in here."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from swamp.errors import ValidationError
from swamp.models.api import ModelType
from swamp.models.inputs import CliString, coerce_field, each_field, validate_inputs
from swamp.util.documents import format_errors

if TYPE_CHECKING:
    from pydantic import BaseModel

    from swamp.models.definition_schema import Definition

#: (value, variables, source, field) -> value with ${{ }} evaluated.
Renderer = Callable[[Any, dict, str, str], Any]


def _verbatim(value: Any, variables: dict, source: str, field: str) -> Any:
    return value


_INPUT_REF = re.compile(r"""\binputs\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*["']([^"']+)["']\s*\])""")
_INPUT_ANY = re.compile(r"\binputs\b")


def referenced_inputs(value: Any) -> set[str] | None:
    """The input names the expressions in ``value`` read (``inputs.x``,
    ``inputs["x"]``); None when one reads ``inputs`` some other way (then
    every input may be needed)."""
    from swamp.expr.template import iter_templates

    names: set[str] = set()
    for _path, text in iter_templates(value, ""):
        found = {a or b for a, b in _INPUT_REF.findall(text)}
        if len(_INPUT_ANY.findall(text)) > len(_INPUT_REF.findall(text)):
            return None
        names |= found
    return names


class ArgumentSchema:
    """The merged arguments of one method, asked what a run needs. A type
    that declares its schemas as LazySchema (a built-in) answers from its
    fast-path table while values are exactly what the table takes, and
    from its pydantic class otherwise; any other type, from its pydantic
    class, as it always has."""

    def __init__(self, model_type: ModelType, method: str) -> None:
        self.model_type, self.method = model_type, method
        self.fast = model_type.fast_arguments(method)

    @property
    def model(self) -> type[BaseModel]:
        return self.model_type.arguments_model(self.method)

    def names(self) -> Any:
        return self.fast.fields if self.fast is not None else self.model.model_fields

    def required(self) -> list[str]:
        if self.fast is not None:
            return self.fast.required
        return [k for k, f in self.model.model_fields.items() if f.is_required()]

    def properties(self) -> dict:
        """Each field's JSON schema, as far as coercing a command-line
        value needs it (its type)."""
        if self.fast is not None:
            return {k: {"type": f.json_type()} for k, f in self.fast.fields.items() if f.json_type()}
        # The JSON schema (pydantic.json_schema, a few ms) only when inputs need coercing.
        return self.model.model_json_schema().get("properties", {})

    def fits(self, key: str, value: Any) -> bool:
        """``value`` is exactly what the field takes (no need to ask the class)."""
        return self.fast is not None and self.fast.fields[key].fits(value)

    def validate(self, values: Any, what: str) -> Any:
        """The arguments, validated; a ValidationError naming every problem
        (``what``: whose arguments) when they are not."""
        if self.fast is not None:
            args = self.fast.fast(values)
            if args is not None:
                return args
        from pydantic import ValidationError as PydanticError

        try:
            model = self.model.model_validate(values)
        except PydanticError as e:
            msg, hint = format_errors(e, self.model)
            raise ValidationError(f"{what}: invalid arguments: {msg}", hint=hint) from None
        if self.fast is not None:  # a built-in's method gets the same kind of object either way
            from swamp.util.fast_schema import Arguments

            return Arguments(model.model_dump())
        return model


def method_values(definition: Definition, method: str) -> dict:
    """What the definition gives ``method``: global arguments, then the
    method's own (which win)."""
    raw: dict = {**definition.globalArguments}
    mcfg = definition.methods.get(method)
    if mcfg is not None:
        raw.update(mcfg.arguments)
    return raw


def check_inputs(definition: Definition, model_type: ModelType, method: str, inputs: dict | None) -> dict:
    """The inputs a run of ``method`` uses, validated (every key: a declared
    input or an argument's own value). Evaluates no expression, so it can
    run before a command takes any lease."""
    declared, arguments = split_inputs(definition, model_type, method, inputs)
    _refuse_missing(definition, model_type, method, arguments)
    return {**declared, **arguments}


def _refuse_missing(definition: Definition, model_type: ModelType, method: str, arguments: dict) -> None:
    missing = missing_arguments(definition, model_type, method, arguments)
    if missing:
        raise ValidationError(
            f"model {definition.name!r} method {method!r}: missing argument(s) {', '.join(missing)}",
            hint="give " + ("them" if len(missing) > 1 else "it") + " at run time ("
                 + " ".join(f"--input {m}=..." for m in missing) + ") or in the definition")


def split_inputs(definition: Definition, model_type: ModelType, method: str,
                 inputs: dict | None) -> tuple[dict, dict]:
    """(declared inputs, argument values): a key the definition declares as
    an input is an input (checked against its schema, defaults applied);
    any other key must name one of the method's arguments, whose value it
    supplies or overrides (checked against the argument's type now, so a
    wrongly typed one fails before anything is written). A required input
    is demanded only when the method's arguments read it."""
    inputs = dict(inputs or {})
    schema = ArgumentSchema(model_type, method)
    fields = schema.names()
    if definition.inputs is None:
        declared_schema, names = None, set()
    else:
        declared_schema = dict(definition.inputs)
        names = set((declared_schema.get("properties") or {}))
        if declared_schema.get("additionalProperties"):
            names |= {k for k in inputs if k not in fields}
    as_inputs = {k: v for k, v in inputs.items() if k in names}
    as_arguments = {k: v for k, v in inputs.items() if k not in names}
    unknown = [k for k in as_arguments if k not in fields]
    if unknown:
        from swamp.util.names import did_you_mean

        known = sorted(set(fields) | names)
        raise ValidationError(
            f"model {definition.name!r} method {method!r}: unknown input(s) {', '.join(sorted(unknown))}",
            hint=did_you_mean(unknown[0], known) or (
                f"inputs and arguments: {', '.join(known)}" if known else "this method takes no arguments"))
    declared: dict = {}
    if declared_schema is not None:
        used = referenced_inputs(method_values(definition, method))
        if used is not None:
            declared_schema["required"] = [r for r in declared_schema.get("required") or [] if r in used]
        declared = validate_inputs(declared_schema, as_inputs, what=f"inputs of model {definition.name!r}")
    props = schema.properties() if as_arguments else {}
    where = f"model {definition.name!r} method {method!r}: "

    def checked(k: str, v):  # coerced, then against its argument's type; every field, all errors at once
        try:
            v = coerce_field(k, v, props.get(k))
        except ValidationError as e:
            raise ValidationError(f"invalid input {e.message}") from None
        v = str(v) if isinstance(v, CliString) else v
        if not schema.fits(k, v):
            _check_field(schema.model, k, v)
        return v

    try:
        arguments = each_field(as_arguments, checked)
    except ValidationError as e:
        raise ValidationError(where + e.message, hint=e.hint) from None
    return declared, arguments


def fixed_arguments(definition: Definition, model_type: ModelType, method: str, inputs: dict | None) -> list[str]:
    """The arguments that ``inputs`` would replace although the definition
    gives them a value: a run that changes what the definition fixes (a
    command/shell model's ``run``) is a change of the definition, not a
    use of it. Declared inputs, and arguments the definition leaves open,
    are not among them. Sorted."""
    _declared, arguments = split_inputs(definition, model_type, method, inputs)
    fixed = method_values(definition, method)
    return sorted(k for k in arguments if k in fixed)


def is_automatic(definition: Definition) -> bool:
    """An automatic definition (models/auto_definitions.py): its values came
    from the callers of ``model method run TYPE ...`` or from a workflow
    step's rendered ``globalArgs``, so they are data, never rendered."""
    return (definition.tags or {}).get("automatic") == "true" and definition.id == _auto_id(definition)


def _auto_id(definition: Definition) -> str:
    from swamp.models.auto_definitions import auto_id

    return auto_id(definition.type, definition.name)


def missing_arguments(definition: Definition, model_type: ModelType, method: str,
                      given: dict | None = None) -> list[str]:
    """The required arguments of ``method`` that neither the definition nor
    ``given`` (run-time inputs) gives a value, and that have no default."""
    values = {**method_values(definition, method), **(given or {})}
    return sorted(k for k in ArgumentSchema(model_type, method).required() if k not in values)


def _check_field(schema_model: type[BaseModel], key: str, value) -> None:
    """An input's value against its argument's type, now: a wrongly typed
    input fails before anything is written (and, in a batch, before any run).
    A value given at run time is data (never rendered), so it is checked
    as it is, `${{` or not."""
    from pydantic import TypeAdapter, ValidationError as PydanticError

    field = schema_model.model_fields[key]
    try:
        TypeAdapter(field.annotation).validate_python(value, strict=False)
    except PydanticError as e:
        problem = "; ".join(err["msg"] for err in e.errors()) if e.errors() else str(e)
        raise ValidationError(f"invalid input {key}: {problem}") from None


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
    """Return (validated arguments, the inputs used). A type with a fast
    path (a built-in) gets them as util/fast_schema.Arguments: the pydantic
    instance's attributes, without pydantic."""
    schema = ArgumentSchema(model_type, method)
    raw = method_values(definition, method)
    declared, arguments = split_inputs(definition, model_type, method, inputs)
    _refuse_missing(definition, model_type, method, arguments)
    used_inputs = {**declared, **arguments}
    ctx_vars = {
        "inputs": used_inputs if definition.inputs is None else declared,
        "self": {"name": definition.name, "id": definition.id, "version": definition.version,
                 "tags": definition.tags, "globalArguments": definition.globalArguments},
        **(variables or {}),
    }
    render = renderer or _verbatim
    # Values are data, never templates: only the definition's own text is
    # rendered (an automatic definition holds nothing but values callers
    # gave, so none of it is). The arguments a caller gives at run time are
    # put in afterwards, as they are, where no renderer ever sees them; a
    # declared input reaches the text only through ``inputs.x``, whose
    # value an expression gets as a value, never as text to evaluate.
    own = {k: v for k, v in raw.items() if k not in arguments}
    if not is_automatic(definition):
        own = render(own, ctx_vars, source or f"models/{definition.type}/{definition.name}.yaml",
                     "globalArguments")
    resolved = {**own, **arguments}  # each argument given at run time overrides the definition's value
    args = schema.validate(resolved, f"model {definition.name!r} method {method!r}")
    return args, used_inputs
