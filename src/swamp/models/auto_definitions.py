"""Automatic definitions, for direct type execution
(``swamp model method run TYPE METHOD NAME``): a run of a type needs no
hand-written definition; one is kept in the datastore at
``auto-definitions/<type>/<name>.yaml`` (shared with the other peers, not in
git, not listed by ``model search``), holding the global arguments of its
latest run. Its id derives from type and name, so every peer's is the same."""

from __future__ import annotations

import uuid
from pathlib import Path

from typing import TYPE_CHECKING

from swamp.errors import SwampError, ValidationError
from swamp.util import yamlio
from swamp.util.names import check_name, check_type_name

if TYPE_CHECKING:  # pydantic loads only when a definition is (names_by_id reads files on the fast path)
    from swamp.models.definition_schema import Definition
    from swamp.repo.context import Repo

ROOT = "auto-definitions"


def rel_path(type_name: str, name: str) -> str:
    check_type_name(type_name)
    check_name(name, "model name")
    return f"{ROOT}/{type_name}/{name}.yaml"


def auto_id(type_name: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"swamp:auto-definition:{type_name}/{name}"))


def iter_files(repo: Repo) -> list[Path]:
    """The automatic definitions in this checkout's copy of the datastore."""
    try:
        root = repo.datastore.local_path(ROOT)
    except (SwampError, OSError, ValueError):
        return []
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.yaml") if not p.name.startswith("."))


def load(path: Path) -> Definition:
    from swamp.models.definition_schema import Definition
    from swamp.util import documents

    d = documents.validate(Definition, yamlio.load(path), str(path))
    if path.stem != d.name:
        raise ValidationError(f"{path}: name {d.name!r} does not match the file name {path.stem!r}")
    return d


def find(repo: Repo, type_name: str, name: str) -> Definition | None:
    path = repo.datastore.local_path(rel_path(type_name, name))
    return load(path) if path.is_file() else None


def route_inputs(model_type, method: str, inputs: dict) -> tuple[dict, dict]:
    """(global arguments, method inputs): a key the method's own arguments
    declare goes to the method (it wins when both declare it), a key only
    the global arguments declare becomes a global argument of the
    definition; any other key is refused."""
    from swamp.util.names import did_you_mean

    spec = model_type.methods[method]
    own = set(spec.arguments.model_fields) if spec.arguments is not None else set()
    glob = set(model_type.global_arguments.model_fields)
    unknown = sorted(k for k in inputs if k not in own and k not in glob)
    if unknown:
        known = sorted(own | glob)
        raise ValidationError(f"{model_type.type} method {method!r}: unknown input(s) {', '.join(unknown)}",
                              hint=did_you_mean(unknown[0], known) or (
                                  f"arguments: {', '.join(known)}" if known else "it takes no arguments"))
    return ({k: v for k, v in inputs.items() if k not in own},
            {k: v for k, v in inputs.items() if k in own})


def updated(existing: Definition | None, model_type, name: str, global_args: dict) -> Definition:
    """The automatic definition with this run's global arguments (those it
    does not give keep their last value)."""
    from swamp.models.definition_schema import Definition
    from swamp.models.inputs import CliString, coerce_field, each_field

    props = model_type.global_arguments.model_json_schema().get("properties", {})
    values = each_field(global_args, lambda k, v: coerce_field(k, v, props.get(k)))  # every bad one named
    values = {k: str(v) if isinstance(v, CliString) else v for k, v in values.items()}
    base = existing.globalArguments if existing is not None else {}
    return Definition(type=model_type.type, typeVersion=model_type.version, id=auto_id(model_type.type, name),
                      name=name, globalArguments={**base, **values},
                      tags={**(existing.tags if existing else {}), "automatic": "true"})


def save(ds, definition: Definition) -> None:
    """Inside the caller's session."""
    data = definition.model_dump(exclude_none=True)
    for key in ("methods",):
        if not data.get(key):
            data.pop(key, None)
    ds.write_bytes(rel_path(definition.type, definition.name), yamlio.dumps(data).encode())
