"""Workflow files in git: ``workflows/workflow-<name>.yaml``, found by name
(the file name) or by id. A scoped name, ``@acme/child``, is the file
``workflows/@acme/workflow-child.yaml``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import ConflictError, NotFoundError, SwampError, ValidationError
from swamp.util import documents, yamlio
from swamp.util.ids import new_id
from swamp.util.names import SCOPED_NAME_RE, check_workflow_name, did_you_mean, is_workflow_name
from swamp.workflows.schema import Workflow, workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo

PREFIX = "workflow-"


def workflow_path(repo: Repo, name: str) -> Path:
    check_workflow_name(name)
    scoped = SCOPED_NAME_RE.match(name)
    if scoped:
        return repo.workflows_dir / f"@{scoped.group(1)}" / f"{PREFIX}{scoped.group(2)}.yaml"
    return repo.workflows_dir / f"{PREFIX}{name}.yaml"


def iter_workflow_files(repo: Repo) -> list[Path]:
    if not repo.workflows_dir.is_dir():
        return []
    return sorted([*repo.workflows_dir.glob(f"{PREFIX}*.yaml"), *repo.workflows_dir.glob(f"@*/{PREFIX}*.yaml")])


def file_name(path: Path) -> str:
    """The workflow name a file's path gives: its own, or @scope/name in a scope's folder."""
    name = path.stem[len(PREFIX):]
    return f"{path.parent.name}/{name}" if path.parent.name.startswith("@") else name


def load_workflow(path: Path, repo_root: Path | None = None) -> Workflow:
    source = str(path.relative_to(repo_root)) if repo_root and path.is_relative_to(repo_root) else str(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise NotFoundError(f"{source} does not exist") from None
    wf = documents.validate(Workflow, yamlio.loads(text, source), source)
    if file_name(path) != wf.name:
        raise ValidationError(f"{source}: name {wf.name!r} does not match the file name {path.name!r}",
                              hint=f"rename the file to {_relative_file(wf.name)} or the workflow to "
                                   f"{file_name(path)!r}")
    return wf


def _relative_file(name: str) -> str:
    scoped = SCOPED_NAME_RE.match(name)
    return f"@{scoped.group(1)}/{PREFIX}{scoped.group(2)}.yaml" if scoped else f"{PREFIX}{name}.yaml"


def shown_path(repo: Repo, path: Path) -> str:
    """A workflow file as records and output name it: relative to the
    repository, or the whole path of one an extension ships."""
    return str(path.relative_to(repo.root)) if path.is_relative_to(repo.root) else str(path)


def shipped_by_extension(repo: Repo, path: Path) -> bool:
    """Whether the file is an extension's (swamp.extensions.workflows), not
    the repository's: read-only here."""
    return not Path(path).resolve().is_relative_to(Path(repo.workflows_dir).resolve())


def find_workflow(repo: Repo, name_or_id: str) -> tuple[Path, Workflow]:
    """By name first, then by id."""
    path = find_workflow_file(repo, name_or_id)
    return path, load_workflow(path, repo.root)


def find_workflow_file(repo: Repo, name_or_id: str) -> Path:
    """The file of a workflow, by name (without reading it), else by id."""
    if is_workflow_name(name_or_id):
        path = workflow_path(repo, name_or_id)
        if path.is_file():
            return path

    for p in iter_workflow_files(repo):
        try:
            wf = load_workflow(p, repo.root)
        except SwampError:
            continue
        if workflow_id(wf) == name_or_id:
            return p
    from swamp.extensions.workflows import find as in_extension

    shipped = in_extension(repo, name_or_id)  # @ext/name: a workflow the extension `ext` ships
    if shipped is not None:
        return shipped
    names = [file_name(p) for p in iter_workflow_files(repo)]
    raise NotFoundError(f"no workflow named {name_or_id!r}",
                        hint=did_you_mean(name_or_id, names) or "list workflows with 'swamp workflow search'")


SKELETON = """\
id: {id}
name: {name}
description: What this workflow does
# inputs:
#   properties:
#     target: {{type: string}}
#   required: [target]
jobs:
  - name: main
    steps:
      # Call a model's method:
      # - name: hello
      #   task:
      #     type: model_method
      #     modelIdOrName: my-model
      #     methodName: execute
      #     inputs: {{}}
      - name: check
        task:
          type: assert
          expr: "${{{{ true }}}}"
          message: replace this step with real work
"""


def create_workflow(repo: Repo, name: str) -> tuple[Path, Workflow]:
    path = workflow_path(repo, name)
    if path.exists():
        raise ConflictError(f"a workflow named {name!r} already exists at {path.relative_to(repo.root)}")

    import json

    # "@" cannot start a plain YAML scalar: a scoped name is written quoted
    text = SKELETON.format(id=new_id(), name=json.dumps(name) if name.startswith("@") else name)
    wf = documents.validate(Workflow, yamlio.loads(text), str(path))  # the skeleton must stay valid
    repo.write_config(path, text)
    return path, wf


def workflows_using_model(repo: Repo, name: str, model_id: str) -> list[str]:
    """The names of the workflows with a step that runs the model named
    ``name`` (or with id ``model_id``), written literally. A workflow file
    that does not load is skipped: `workflow validate` reports it."""
    out = []
    for path in iter_workflow_files(repo):
        try:
            wf = load_workflow(path, repo.root)
        except SwampError:
            continue
        if any(step.task.type == "model_method" and step.task.modelIdOrName in (name, model_id)
               for job in wf.jobs for step in job.steps):
            out.append(wf.name)
    return sorted(out)
