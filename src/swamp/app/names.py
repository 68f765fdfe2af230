"""The names a shell completes (``swamp completions``): models, their
methods and data, model types, workflows and vaults, read from this
checkout's files and its local copy of the datastore. No session, no pull,
no network: completing a word must be quick and must change nothing.
Anything unreadable gives no names rather than an error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import SwampError

if TYPE_CHECKING:
    from swamp.repo.context import Repo

# The other imports sit in the functions that use them: shell completion calls one function
# per key press, and each loads only what its names need (the model registry, the workflow
# schema and pydantic are not needed for most).


def _quiet(fn):
    def wrapper(*args, **kwargs) -> list[str]:
        try:
            return sorted(set(fn(*args, **kwargs)))
        except (SwampError, OSError, ValueError, KeyError, TypeError):
            return []
    return wrapper


def _repo(repo_dir):
    from swamp.repo.context import Repo

    repo = Repo.open(repo_dir)
    repo.offline = True  # whatever opens the datastore never pulls
    return repo


@_quiet
def models(repo_dir=None) -> list[str]:
    """Definitions' names: files under models/ (their file name is their
    name), and the automatic definitions of types run directly."""
    from swamp.models import auto_definitions
    from swamp.models.definition_files import iter_definition_files

    repo = _repo(repo_dir)
    names = [p.stem for p in iter_definition_files(repo)]
    names += [p.stem for p in auto_definitions.iter_files(repo)]
    return names


def _definition(repo: Repo, model: str):
    """Its name, type and id: the fast read (pydantic only for a file off the fast path)."""
    from swamp.models.definition_files import find

    return find(repo, model)[1]


@_quiet
def methods(model: str, repo_dir=None) -> list[str]:
    """The methods of MODEL's type (the type registry: builtin types and
    the repository's extensions, loaded from disk)."""
    from swamp.models.registry import registry_for

    repo = _repo(repo_dir)
    return list(registry_for(repo).get(_definition(repo, model).type).methods)


@_quiet
def model_types(repo_dir=None) -> list[str]:
    from swamp.models.registry import registry_for

    return [t.type for t in registry_for(_repo(repo_dir)).all()]


@_quiet
def data(model: str, repo_dir=None) -> list[str]:
    """The data names MODEL wrote, as this checkout's copy of the datastore has them."""
    from swamp.data.repository import DataRepository

    repo = _repo(repo_dir)
    definition = _definition(repo, model)
    return DataRepository(repo.datastore).names(definition.type, definition.id)


@_quiet
def workflows(repo_dir=None) -> list[str]:
    from swamp.workflows.files import file_name, iter_workflow_files

    return [file_name(p) for p in iter_workflow_files(_repo(repo_dir))]


@_quiet
def vaults(repo_dir=None) -> list[str]:
    repo = _repo(repo_dir)
    root = repo.vaults_dir
    return [p.stem for p in root.glob("*/*.yaml") if p.is_file()] if root.is_dir() else []


@_quiet
def steps(workflow: str, repo_dir=None) -> list[str]:
    """The step names of WORKFLOW's file, read as plain YAML (completion
    needs no schema: a file the schema would refuse still offers its names)."""
    from swamp.util import yamlio
    from swamp.workflows.files import workflow_path

    doc = yamlio.load(workflow_path(_repo(repo_dir), workflow))
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    return [s["name"] for j in (jobs if isinstance(jobs, list) else []) if isinstance(j, dict)
            for s in (j.get("steps") if isinstance(j.get("steps"), list) else [])
            if isinstance(s, dict) and isinstance(s.get("name"), str)]


@_quiet
def run_ids(repo_dir=None) -> list[str]:
    """Every workflow run's id this checkout's copy of the datastore has."""
    from swamp.workflows import records

    ds = _repo(repo_dir).datastore
    return [rid for wid in ds.listdir(records.RUNS) for rid in records.run_ids(ds, wid)]
