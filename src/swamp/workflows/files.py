"""Workflow files in git: ``workflows/workflow-<name>.yaml``, found by name
(the file name) or by id."""

from __future__ import annotations

from pathlib import Path

from swamp.errors import ConflictError, NotFoundError, SwampError, ValidationError
from swamp.util import documents, yamlio
from swamp.util.names import NAME_RE, check_name, did_you_mean
from swamp.workflows.schema import Workflow

PREFIX = "workflow-"


def workflow_path(repo, name: str) -> Path:
    check_name(name, "workflow name")
    return repo.workflows_dir / f"{PREFIX}{name}.yaml"


def iter_workflow_files(repo) -> list[Path]:
    if not repo.workflows_dir.is_dir():
        return []
    return sorted(p for p in repo.workflows_dir.glob(f"{PREFIX}*.yaml"))


def file_name(path: Path) -> str:
    return path.stem[len(PREFIX):]


def load_workflow(path: Path, repo_root: Path | None = None) -> Workflow:
    source = str(path.relative_to(repo_root)) if repo_root and path.is_relative_to(repo_root) else str(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise NotFoundError(f"{source} does not exist") from None
    wf = documents.validate(Workflow, yamlio.loads(text, source), source)
    if file_name(path) != wf.name:
        raise ValidationError(f"{source}: name {wf.name!r} does not match the file name {path.name!r}",
                              hint=f"rename the file to {PREFIX}{wf.name}.yaml or the workflow to {file_name(path)!r}")
    return wf


def find_workflow(repo, name_or_id: str) -> tuple[Path, Workflow]:
    """By name first, then by id."""
    path = find_workflow_file(repo, name_or_id)
    return path, load_workflow(path, repo.root)


def find_workflow_file(repo, name_or_id: str) -> Path:
    """The file of a workflow, by name (without reading it), else by id."""
    if NAME_RE.match(name_or_id):
        path = repo.workflows_dir / f"{PREFIX}{name_or_id}.yaml"
        if path.is_file():
            return path
    from swamp.workflows.schema import workflow_id

    for p in iter_workflow_files(repo):
        try:
            wf = load_workflow(p, repo.root)
        except SwampError:
            continue
        if workflow_id(wf) == name_or_id:
            return p
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


def create_workflow(repo, name: str) -> tuple[Path, Workflow]:
    path = workflow_path(repo, name)
    if path.exists():
        raise ConflictError(f"a workflow named {name!r} already exists at {path.relative_to(repo.root)}")
    from swamp.util.ids import new_id

    text = SKELETON.format(id=new_id(), name=name)
    wf = documents.validate(Workflow, yamlio.loads(text), str(path))  # the skeleton must stay valid
    repo.write_config(path, text)
    return path, wf


def workflows_using_model(repo, name: str, model_id: str) -> list[str]:
    """The names of the workflows with a step that runs the model named
    ``name`` (or with id ``model_id``), written literally. A workflow file
    that does not load is skipped: `workflow validate` reports it."""
    from swamp.errors import SwampError

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
