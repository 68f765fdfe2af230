"""Who owns a data name, as `data get` and `data versions` take it and
`data list` shows it: a model, or a workflow (its reports are data filed
under the owner type ``swamp/workflow`` and the workflow's id;
reports/store.py).

`data list` shows a workflow's data under the workflow's name, so the name
it shows is the one `data get` takes. A model of the same name wins: the
list then shows the workflow's id, which `data get` takes too.

On a shared datastore, data whose model (or workflow) has no file in this
clone is listed under its id: ``owner`` then finds it by that id in the
datastore, so every name `data list` shows is one `data get` takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import NotFoundError
from swamp.models.definition_lookup import find_ref
from swamp.util.plain import Plain

if TYPE_CHECKING:
    from swamp.repo.context import Repo

# The other imports sit in the functions that use them: `data get` loads this module, and with
# them at the top it loads pydantic and the workflow schema (bench/startup_bench.py).


class Owner(Plain):
    """What the data use cases read of a definition: type, id and name."""

    __slots__ = ("type", "id", "name")

    def __init__(self, type: str, id: str, name: str) -> None:  # noqa: A002 (a definition's attribute names)
        self.type = type
        self.id = id
        self.name = name


def owner(repo: Repo, ref: str):
    """The model named (or with id) ``ref``, else the workflow so named or
    with that id; the model's not-found error when neither is."""
    try:
        return find_ref(repo, ref)  # remembered while models/ is unchanged: serve does this on every read
    except NotFoundError as not_a_model:
        wf = _workflow(repo, ref) or _stored_only(repo, ref)
        if wf is None:
            raise not_a_model from None
        return wf


def _stored_only(repo: Repo, ref: str) -> Owner | None:
    """The owner whose data the datastore files under the id ``ref``, when
    no definition here has that id (another peer's model or workflow)."""
    from swamp.app.lifecycle import reading
    from swamp.data.walk import iter_models

    if not _looks_like_id(ref):
        return None  # a name: the datastore files data only under ids
    with reading(repo):
        found = [m for m in iter_models(repo.datastore) if m[1] == ref]
    return Owner(found[0][0], ref, ref) if len(found) == 1 else None


def _looks_like_id(ref: str) -> bool:
    import uuid

    try:
        uuid.UUID(ref)
    except ValueError:
        return False
    return True


def _workflow(repo: Repo, ref: str) -> Owner | None:
    from swamp.reports.store import WORKFLOW_OWNER
    from swamp.workflows.files import find_workflow
    from swamp.workflows.schema import workflow_id

    try:
        wf = find_workflow(repo, ref)[1]
    except NotFoundError:
        return None
    return Owner(WORKFLOW_OWNER, workflow_id(wf), wf.name)


def workflow_names(repo: Repo, model_names) -> dict[str, str]:
    """Each readable workflow's name by its id, except a name a model has."""
    from swamp.app.reports import workflow_owners

    taken = set(model_names)
    return {wid: name for wid, name in workflow_owners(repo).items() if name not in taken}

