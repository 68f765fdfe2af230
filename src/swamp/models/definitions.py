"""Definitions: YAML at ``models/{type}/{name}.yaml`` configuring one model.
``${{ }}`` expressions are kept verbatim here and resolved only when a
method runs (see arguments.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from swamp.models.definition_files import check_file_name, find, iter_definition_files, read_raw  # noqa: F401
from swamp.models.definition_schema import Definition
from swamp.util import documents, yamlio
from swamp.util.atomic import atomic_write
from swamp.util.names import check_name, check_type_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def definition_path(repo: Repo, model_type: str, name: str) -> Path:
    check_type_name(model_type)
    check_name(name, "model name")
    return repo.models_dir / model_type / f"{name}.yaml"


def load_definition(path: Path) -> Definition:
    d = documents.validate(Definition, read_raw(path), str(path))
    check_file_name(path, d.name)
    return d


def find_definition(repo: Repo, name_or_id: str) -> tuple[Path, Definition]:
    """By name (the file name) first, then by id; fully validated."""
    return find(repo, name_or_id, load_definition)


def save_definition(path: Path, definition: Definition, repo: Repo | None = None) -> None:
    """With ``repo``, written where the repository keeps its config (the
    datastore's config tier under managed config)."""
    data = definition.model_dump(exclude_none=True)
    for key in ("tags", "methods", "globalArguments"):
        if not data.get(key):
            data.pop(key, None)
    if repo is not None:
        repo.write_config(path, yamlio.dumps(data))
    else:
        atomic_write(path, yamlio.dumps(data))
