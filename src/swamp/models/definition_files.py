"""Finding definition files, and reading one on the fast path (no pydantic)
for commands that only need a model's name, type and id, such as `data get`.
The schema in definition_schema.py still speaks for any file that is not exactly
as expected."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Callable

from swamp.errors import NotFoundError, SwampError, ValidationError
from swamp.util import yamlio
from swamp.util.documents import DocView, read_light
from swamp.util.names import NAME_MAX, NAME_RE, TYPE_RE

_FIELDS = {
    "type": str, "typeVersion": (str, type(None)), "id": str, "name": str, "version": int,
    "description": (str, type(None)), "tags": dict, "globalArguments": dict, "methods": dict,
    "inputs": (dict, type(None)), "resources": (dict, type(None)), "files": (dict, type(None)),
}


def iter_definition_files(repo) -> list[Path]:
    if not repo.models_dir.is_dir():
        return []
    return sorted(p for p in repo.models_dir.rglob("*.yaml") if not p.name.startswith("."))


def read_raw(path: Path) -> Any:
    raw = yamlio.load(path)
    if isinstance(raw, dict) and "id" not in raw and isinstance(raw.get("type"), str) \
            and isinstance(raw.get("name"), str):
        # A hand-written file without an id must name the same model (and so
        # the same data) on every load: derive the id from type and name.
        raw = {**raw, "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"swamp:model:{raw['type']}/{raw['name']}"))}
    return raw


def check_file_name(path: Path, name: str) -> None:
    if path.stem != name:
        raise ValidationError(f"{path}: name {name!r} does not match the file name {path.stem!r}")


def _schema():
    # pydantic loads only when a file strays from the fast path.
    from swamp.models.definition_schema import Definition

    return Definition


def read_ref(path: Path) -> DocView:
    raw = read_raw(path)
    if isinstance(raw, dict) and isinstance(raw.get("name"), str) and isinstance(raw.get("type"), str) \
            and NAME_RE.match(raw["name"]) and len(raw["name"]) <= NAME_MAX and TYPE_RE.match(raw["type"]) \
            and ".." not in raw["type"]:
        doc = read_light(raw, str(path), fields=_FIELDS, required=("type", "id", "name"), schema=_schema)
    else:
        from swamp.util.documents import validate

        doc = DocView(validate(_schema(), raw, str(path)).model_dump())
    check_file_name(path, doc.name)
    return doc


def names_by_id(repo) -> dict[str, str]:
    """Each readable definition's name by its id (data knows models by id),
    automatic ones included."""
    from swamp.models import auto_definitions

    out = {}
    for p in auto_definitions.iter_files(repo) + iter_definition_files(repo):
        try:
            d = read_ref(p)
        except SwampError:
            continue
        out[d.id] = d.name
    return out


def find(repo, name_or_id: str, load: Callable[[Path], Any] = read_ref) -> tuple[Path, Any]:
    """By name (the file name) first, then by id."""
    if NAME_RE.match(name_or_id):
        for p in iter_definition_files(repo):
            if p.stem == name_or_id:
                return p, load(p)
    for p in iter_definition_files(repo):
        try:
            d = load(p)
        except SwampError:
            continue
        if d.id == name_or_id:
            return p, d
    from swamp.models import auto_definitions

    # An automatic definition (direct type execution), kept in the datastore.
    for p in auto_definitions.iter_files(repo):
        if p.stem == name_or_id:
            return p, load(p)
    for p in auto_definitions.iter_files(repo):
        try:
            d = load(p)
        except SwampError:
            continue
        if d.id == name_or_id:
            return p, d
    from swamp.util.names import did_you_mean

    names = [p.stem for p in iter_definition_files(repo)]
    raise NotFoundError(f"no model named {name_or_id!r}", hint=did_you_mean(name_or_id, names)
                        or "list models with 'swamp model search'")
