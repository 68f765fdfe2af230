"""What a model definition must satisfy before it is saved or run: its
methods exist, its overrides name what its type declares, and the values
it gives fit their arguments wherever no expression decides them at run
time; plus validate's warning for a command pasting a value into `run:`.
The use cases that read definitions and report on them are
``app.model_definitions``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError as PydanticError

from swamp.errors import SwampError, ValidationError
from swamp.expr import has_expressions
from swamp.models.arguments import method_values, missing_arguments
from swamp.models.definitions import Definition
from swamp.models.inputs import CliString, coerce_field, each_field
from swamp.models.shell_injection import warning
from swamp.models.specs import check_gc_policy, check_lifetime
from swamp.util.names import did_you_mean
from swamp.util.problems import Problem

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def coerce_global_args(model_type, pairs: dict[str, str]) -> dict:
    props = model_type.global_arguments.model_json_schema().get("properties", {})

    def coerced(key: str, value: str):
        if key not in props:
            raise ValidationError(f"{model_type.type} has no global argument {key!r}",
                                  hint=did_you_mean(key, props) or f"arguments: {', '.join(sorted(props))}")
        # An expression is kept verbatim; it is resolved, and its result
        # validated, when a method runs. A JSON map or list holding
        # expressions is parsed (`env={"WHO": "${{ inputs.who }}"}`, the
        # shell-safe way to hand an input to a command).
        kept = "${{" in value and not _json_container(value, props[key])
        return value if kept else coerce_field(key, CliString(value), props[key])

    return each_field(pairs, coerced)  # every bad argument named at once


def _json_container(text: str, prop: dict) -> bool:
    wants = {p.get("type") for p in prop.get("anyOf", [prop])}
    return bool(wants & {"object", "array"}) and text.lstrip()[:1] in ("{", "[")


def expression_syntax_problems(d: Definition) -> list[Problem]:
    """Each ``${{ ... }}`` of the definition's arguments that cannot parse,
    named by its field: refused when the definition is created or
    validated, not when a run reaches it."""
    from swamp.models import expressions  # the bridge: knows the data and vault namespaces

    errors = expressions.validate(d.globalArguments, field="globalArguments")
    for m in sorted(d.methods):
        errors += expressions.validate(d.methods[m].arguments, field=f"methods.{m}.arguments")
    return [e.problem() for e in errors]


def definition_problems(repo: Repo, d: Definition, model_type, given_by_steps=None) -> list[Problem]:
    """Static checks: methods exist, and the values the definition gives fit
    their arguments' types wherever no expression decides them at run time.
    A required argument without a value is an error only in a method the
    definition configures (arguments under ``methods:``, as upstream's
    validate judges them) when no workflow step gives it either; elsewhere
    a run can give it (--input), and a run without it is refused, naming it."""
    issues = []
    for m in d.methods:
        if m not in model_type.methods:
            issues.append(Problem(f"methods.{m}", f"{model_type.type} has no method {m!r}"))
    issues += _check_overrides(d, model_type)
    issues += expression_syntax_problems(d)
    if has_expressions(d.globalArguments) or has_expressions({k: v.arguments for k, v in d.methods.items()}):
        return issues  # expressions decide the arguments at run time
    issues += _unsupplied_arguments(d, model_type, given_by_steps)
    seen: set[Problem] = set()
    for m in sorted(model_type.methods):
        try:
            model_type.arguments_model(m).model_validate(method_values(d, m))
        except PydanticError as e:
            for err in e.errors():
                if err["type"] == "missing" and len(err["loc"]) == 1:
                    continue
                loc = ".".join(str(p) for p in err["loc"])
                message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
                where = f"methods.{m}.arguments" if err["loc"][0] in (
                    d.methods[m].arguments if m in d.methods else {}) else "globalArguments"
                problem = Problem(f"{where}.{loc}", message)
                if problem not in seen:  # a global argument's problem once, not once per method
                    seen.add(problem)
                    issues.append(problem)
    return issues


def _unsupplied_arguments(d: Definition, model_type, given_by_steps) -> list[Problem]:
    """Required arguments missing from a method the definition configures,
    that no workflow step running that method gives either
    (``given_by_steps(definition, method, argument)``; the workflows sit
    above this package, so the caller asks them)."""
    issues = []
    for m in sorted(d.methods):
        if m not in model_type.methods or not d.methods[m].arguments:
            continue
        missing = missing_arguments(d, model_type, m)
        if missing:
            missing = [a for a in missing if not (given_by_steps and given_by_steps(d, m, a))]
        for a in missing:
            issues.append(Problem(f"methods.{m}.arguments.{a}", "required, and nothing gives it "
                          f"(add it under methods.{m}.arguments or globalArguments in the definition, "
                          f"or give it in the inputs of the workflow step that runs {m})"))
    return issues


def _check_overrides(d: Definition, model_type) -> list[Problem]:
    """A definition's resources:/files: overrides name specs its type
    declares, with valid lifetimes and policies."""
    issues = []
    for kind, declared in (("resources", model_type.resources), ("files", model_type.files)):
        for spec, override in sorted((getattr(d, kind, None) or {}).items()):
            if spec not in declared:
                issues.append(Problem(f"{kind}.{spec}", f"{model_type.type} declares no {kind[:-1]} {spec!r}"
                                      + (f" ({did_you_mean(spec, declared)})" if did_you_mean(spec, declared) else "")))
                continue
            try:
                if override.lifetime is not None:
                    check_lifetime(override.lifetime)
                check_gc_policy(override.garbageCollection)
            except SwampError as e:
                issues.append(Problem(f"{kind}.{spec}", e.message))
    return issues


def shell_warnings(d: Definition) -> list[str]:
    """A command/shell definition pasting a value into its `run`."""
    if d.type != "command/shell":
        return []
    places = [("globalArguments.run", (d.globalArguments or {}).get("run"))]
    places += [(f"methods.{m}.arguments.run", (c.arguments or {}).get("run")) for m, c in sorted(d.methods.items())]
    return [w for field, run in places if (w := warning(field, run))]
