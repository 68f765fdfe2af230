"""Definitions: YAML at ``models/{type}/{name}.yaml`` configuring one model.
``${{ }}`` expressions are kept verbatim here and resolved only when a
method runs (see arguments.py)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swamp.errors import NotFoundError, SwampError, ValidationError
from swamp.util import documents, yamlio
from swamp.util.atomic import atomic_write
from swamp.util.ids import new_id
from swamp.util.names import NAME_MAX, NAME_RE, check_name, check_type_name


class MethodConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arguments: dict[str, Any] = Field(default_factory=dict)


class Definition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    typeVersion: str | None = None
    id: str = Field(default_factory=new_id)
    name: str
    version: int = 1
    description: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    globalArguments: dict[str, Any] = Field(default_factory=dict)
    methods: dict[str, MethodConfig] = Field(default_factory=dict)
    inputs: dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v) or len(v) > NAME_MAX:
            raise ValueError(f"must match {NAME_RE.pattern} and have at most {NAME_MAX} characters")
        return v

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        try:
            check_type_name(v)
        except ValidationError as e:
            raise ValueError(e.message) from None
        return v


def definition_path(repo, model_type: str, name: str) -> Path:
    check_type_name(model_type)
    check_name(name, "model name")
    return repo.models_dir / model_type / f"{name}.yaml"


def load_definition(path: Path) -> Definition:
    raw = yamlio.load(path)
    if isinstance(raw, dict) and "id" not in raw and isinstance(raw.get("type"), str) \
            and isinstance(raw.get("name"), str):
        # A hand-written file without an id must name the same model (and so
        # the same data) on every load: derive the id from type and name.
        raw = {**raw, "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"swamp:model:{raw['type']}/{raw['name']}"))}
    d = documents.validate(Definition, raw, str(path))
    if path.stem != d.name:
        raise ValidationError(f"{path}: name {d.name!r} does not match the file name {path.stem!r}")
    return d


def iter_definition_files(repo) -> list[Path]:
    if not repo.models_dir.is_dir():
        return []
    return sorted(p for p in repo.models_dir.rglob("*.yaml") if not p.name.startswith("."))


def find_definition(repo, name_or_id: str) -> tuple[Path, Definition]:
    """By name (the file name) first, then by id."""
    if NAME_RE.match(name_or_id):
        for p in iter_definition_files(repo):
            if p.stem == name_or_id:
                return p, load_definition(p)
    for p in iter_definition_files(repo):
        try:
            d = load_definition(p)
        except SwampError:
            continue
        if d.id == name_or_id:
            return p, d
    from swamp.util.names import did_you_mean

    names = [p.stem for p in iter_definition_files(repo)]
    raise NotFoundError(f"no model named {name_or_id!r}", hint=did_you_mean(name_or_id, names)
                        or "list models with 'swamp model search'")


def save_definition(path: Path, definition: Definition) -> None:
    data = definition.model_dump(exclude_none=True)
    for key in ("tags", "methods", "globalArguments"):
        if not data.get(key):
            data.pop(key, None)
    atomic_write(path, yamlio.dumps(data))
