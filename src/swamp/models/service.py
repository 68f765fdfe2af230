"""Model types and definitions: search and describe types; create, read,
search, validate and delete definitions. Deleting (which touches the
datastore) runs inside a session the application layer holds."""

from __future__ import annotations

from swamp.data.repository import DataRepository
from swamp.errors import ConflictError, SwampError, ValidationError
from swamp.models.definitions import (Definition, definition_path, find_definition,
                                      iter_definition_files, load_definition, save_definition)
from swamp.models.inputs import CliString, coerce_field, each_field
from swamp.models.registry import registry_for
from swamp.util.names import check_name, did_you_mean


def search_types(repo, query: str | None) -> dict:
    reg = registry_for(repo)
    q = (query or "").lower()
    types = [{"type": t.type, "version": t.version, "description": t.description}
             for t in reg.all() if q in t.type.lower() or q in t.description.lower()]
    return {"types": types, "errors": [str(e) for e in reg.errors]}


def describe_type(repo, type_name: str) -> dict:
    return registry_for(repo).get(type_name).describe()


def _coerce_global_args(model_type, pairs: dict[str, str]) -> dict:
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


def create_model(repo, type_name: str, name: str, global_args: dict[str, str], inputs: dict | None = None) -> dict:
    check_name(name, "model name")
    model_type = registry_for(repo).get(type_name)
    path = definition_path(repo, type_name, name)
    for p in iter_definition_files(repo):
        if p.stem == name:
            raise ConflictError(f"a model named {name!r} already exists at {p.relative_to(repo.root)}")
    definition = Definition(type=type_name, typeVersion=model_type.version, name=name, inputs=inputs,
                            globalArguments=_coerce_global_args(model_type, global_args))
    issues = _validate_definition(repo, definition, model_type)
    if issues:
        raise ValidationError(f"model {name!r}: " + "; ".join(issues))
    save_definition(path, definition, repo)
    return {"id": definition.id, "name": name, "type": type_name, "path": str(path.relative_to(repo.root))}


def get_model(repo, name: str) -> dict:
    path, d = find_definition(repo, name)
    try:
        shown = str(path.relative_to(repo.root))
    except ValueError:  # an automatic definition in a datastore outside the repository
        shown = str(path)
    return {**d.model_dump(exclude_none=True), "path": shown}


def describe_method(repo, name: str, method: str) -> dict:
    """A definition's method: what it does, the arguments it takes (global
    and method arguments as one JSON Schema) and the values the definition
    gives them."""
    from swamp.errors import NotFoundError

    path, d = find_definition(repo, name)
    model_type = registry_for(repo).get(d.type)
    spec = model_type.methods.get(method)
    if spec is None:
        raise NotFoundError(f"model type {d.type!r} has no method {method!r}",
                            hint=did_you_mean(method, model_type.methods)
                            or f"methods: {', '.join(sorted(model_type.methods))}")
    given = {**d.globalArguments, **(d.methods[method].arguments if method in d.methods else {})}
    return {"model": d.name, "type": d.type, "method": method, "description": spec.description,
            "kind": spec.kind, "arguments": model_type.arguments_model(method).model_json_schema(),
            "values": given, **_checks_of(model_type, method)}


def _checks_of(model_type, method: str) -> dict:
    from swamp.models.checks import describe

    found = describe(model_type, method)
    return {"checks": found} if found else {}


def search_models(repo, query: str | None) -> list[dict]:
    q = (query or "").lower()
    out = []
    for p in iter_definition_files(repo):
        try:
            d = load_definition(p)
        except SwampError as e:
            out.append({"name": p.stem, "type": None, "path": str(p.relative_to(repo.root)), "error": e.message})
            continue
        if q in d.name.lower() or q in d.type.lower():
            out.append({"id": d.id, "name": d.name, "type": d.type, "path": str(p.relative_to(repo.root))})
    return sorted(out, key=lambda r: r["name"])


def _validate_definition(repo, d: Definition, model_type, given_by_steps=None) -> list[str]:
    """Static checks: methods exist, and the values the definition gives fit
    their arguments' types wherever no expression decides them at run time.
    A required argument without a value is an error only in a method the
    definition configures (arguments under ``methods:``, as upstream's
    validate judges them) when no workflow step gives it either; elsewhere
    a run can give it (--input), and a run without it is refused, naming it."""
    from pydantic import ValidationError as PydanticError

    from swamp.expr import has_expressions
    from swamp.models.arguments import method_values

    issues = []
    for m in d.methods:
        if m not in model_type.methods:
            issues.append(f"methods.{m}: {model_type.type} has no method {m!r}")
    issues += _check_overrides(d, model_type)
    if has_expressions(d.globalArguments) or has_expressions({k: v.arguments for k, v in d.methods.items()}):
        return issues  # expressions decide the arguments at run time
    issues += _unsupplied_arguments(d, model_type, given_by_steps)
    seen: set[str] = set()
    for m in sorted(model_type.methods):
        try:
            model_type.arguments_model(m).model_validate(method_values(d, m))
        except PydanticError as e:
            for err in e.errors():
                if err["type"] == "missing" and len(err["loc"]) == 1:
                    continue
                loc = ".".join(str(p) for p in err["loc"])
                text = f"{loc}: unknown key" if err["type"] == "extra_forbidden" else f"{loc}: {err['msg']}"
                where = f"methods.{m}.arguments" if loc.split(".")[0] in (
                    d.methods[m].arguments if m in d.methods else {}) else "globalArguments"
                line = f"{where}.{text}"
                if line not in seen:  # a global argument's problem once, not once per method
                    seen.add(line)
                    issues.append(line)
    return issues


def _unsupplied_arguments(d: Definition, model_type, given_by_steps) -> list[str]:
    """Required arguments missing from a method the definition configures,
    that no workflow step running that method gives either
    (``given_by_steps(definition, method, argument)``; the workflows sit
    above this package, so the caller asks them)."""
    from swamp.models.arguments import missing_arguments

    issues = []
    for m in sorted(d.methods):
        if m not in model_type.methods or not d.methods[m].arguments:
            continue
        missing = missing_arguments(d, model_type, m)
        if missing:
            missing = [a for a in missing if not (given_by_steps and given_by_steps(d, m, a))]
        for a in missing:
            issues.append(f"methods.{m}.arguments.{a}: required, and nothing gives it "
                          f"(add it under methods.{m}.arguments or globalArguments in the definition, "
                          f"or give it in the inputs of the workflow step that runs {m})")
    return issues


def _check_overrides(d: Definition, model_type) -> list[str]:
    """A definition's resources:/files: overrides name specs its type
    declares, with valid lifetimes and policies."""
    from swamp.models.specs import check_gc_policy, check_lifetime

    issues = []
    for kind, declared in (("resources", model_type.resources), ("files", model_type.files)):
        for spec, override in sorted((getattr(d, kind, None) or {}).items()):
            if spec not in declared:
                issues.append(f"{kind}.{spec}: {model_type.type} declares no {kind[:-1]} {spec!r}"
                              + (f" ({did_you_mean(spec, declared)})" if did_you_mean(spec, declared) else ""))
                continue
            try:
                if override.lifetime is not None:
                    check_lifetime(override.lifetime)
                check_gc_policy(override.garbageCollection)
            except SwampError as e:
                issues.append(f"{kind}.{spec}: {e.message}")
    return issues


def _shell_warnings(d: Definition) -> list[str]:
    """A command/shell definition pasting a value into its `run`."""
    from swamp.models.shell_injection import warning

    if d.type != "command/shell":
        return []
    places = [("globalArguments.run", (d.globalArguments or {}).get("run"))]
    places += [(f"methods.{m}.arguments.run", (c.arguments or {}).get("run")) for m, c in sorted(d.methods.items())]
    return [w for field, run in places if (w := warning(field, run))]


def validate_models(repo, name: str | None, given_by_steps=None) -> dict:
    reg = registry_for(repo)
    if name:
        # By file name without reading it, so a malformed file is reported like any other problem.
        files = [p for p in iter_definition_files(repo) if p.stem == name][:1] or [find_definition(repo, name)[0]]
    else:
        files = iter_definition_files(repo)
    results = []
    for p in files:
        entry = {"name": p.stem, "path": str(p.relative_to(repo.root)), "valid": True, "errors": [],
                 "warnings": []}  # the one report shape of every validate
        try:
            d = load_definition(p)
            entry["errors"] = _validate_definition(repo, d, reg.get(d.type), given_by_steps)
            entry["warnings"] = _shell_warnings(d)
        except SwampError as e:
            # a did-you-mean rides along, as in workflow validate's report
            close = e.hint if e.hint and e.hint.startswith("did you mean") else None
            entry["errors"] = [e.message + (f" ({close})" if close else "")]
        entry["valid"] = not entry["errors"]
        results.append(entry)
    return {"valid": all(r["valid"] for r in results), "models": results}


def delete_model(ds, path, d, *, force: bool) -> list[str]:
    """Delete definition ``d`` (at ``path``) and, with ``force``, its data;
    returns the data names it had. The caller holds the model's lease."""
    data = DataRepository(ds)
    # A name whose versions were all deleted keeps only a tombstone: no data.
    names = [n for n in data.names(d.type, d.id) if data.versions(d.type, d.id, n)]
    if names and not force:
        raise ConflictError(f"model {d.name!r} still has data ({', '.join(names)})",
                            hint="delete its data first, or pass --force to delete it too")
    data.delete_model(d.type, d.id)
    try:
        # An automatic definition, or one in the config tier (managed
        # config), lives in the datastore: its delete syncs.
        rel = path.absolute().relative_to(ds.root).as_posix()
    except ValueError:
        path.unlink()
    else:
        ds.delete(rel)
    return names
