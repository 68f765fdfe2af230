"""Model types and definitions: search and describe types; create, read,
search, describe and validate definitions. Deleting one, which touches the
datastore, is ``app.models.delete``; the rules a definition must satisfy
are ``models.definition_checks``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import ConflictError, NotFoundError, SwampError, ValidationError
from swamp.util.problems import joined
from swamp.app.validation_report import errors_of, set_errors
from swamp.models.checks import describe
from swamp.models.definition_checks import coerce_global_args, definition_problems, shell_warnings
from swamp.models.definitions import (Definition, definition_path, find_definition,
                                      iter_definition_files, load_definition, save_definition)
from swamp.models.registry import registry_for
from swamp.util.names import check_name, did_you_mean

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def search_types(repo: Repo, query: str | None) -> dict:
    reg = registry_for(repo)
    q = (query or "").lower()
    types = [{"type": t.type, "version": t.version, "description": t.description}
             for t in reg.all() if q in t.type.lower() or q in t.description.lower()]
    return {"types": types, "errors": [str(e) for e in reg.errors]}


def describe_type(repo: Repo, type_name: str) -> dict:
    return registry_for(repo).get(type_name).describe()


def create_model(repo: Repo, type_name: str, name: str, global_args: dict[str, str],
                 inputs: dict | None = None) -> dict:
    check_name(name, "model name")
    model_type = registry_for(repo).get(type_name)
    path = definition_path(repo, type_name, name)
    for p in iter_definition_files(repo):
        if p.stem == name:
            raise ConflictError(f"a model named {name!r} already exists at {p.relative_to(repo.root)}")
    definition = Definition(type=type_name, typeVersion=model_type.version, name=name, inputs=inputs,
                            globalArguments=coerce_global_args(model_type, global_args))
    issues = definition_problems(repo, definition, model_type)
    if issues:
        raise ValidationError(f"model {name!r}: " + joined(issues))
    save_definition(path, definition, repo)
    return {"id": definition.id, "name": name, "type": type_name, "path": str(path.relative_to(repo.root))}


def get_model(repo: Repo, name: str) -> dict:
    path, d = find_definition(repo, name)
    try:
        shown = str(path.relative_to(repo.root))
    except ValueError:  # an automatic definition in a datastore outside the repository
        shown = str(path)
    return {**d.model_dump(exclude_none=True), "path": shown}


def describe_method(repo: Repo, name: str, method: str) -> dict:
    """A definition's method: what it does, the arguments it takes (global
    and method arguments as one JSON Schema) and the values the definition
    gives them."""
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
    found = describe(model_type, method)
    return {"checks": found} if found else {}


def search_models(repo: Repo, query: str | None) -> list[dict]:
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


def validate_models(repo: Repo, name: str | None, given_by_steps=None) -> dict:
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
            errors = definition_problems(repo, d, reg.get(d.type), given_by_steps)
            entry["warnings"] = shell_warnings(d)
        except SwampError as e:
            errors = errors_of(e, str(p), entry["path"])  # each schema error on its own line, a did-you-mean beside it
        set_errors(entry, errors)
        results.append(entry)
    return {"valid": all(r["valid"] for r in results), "models": results}
