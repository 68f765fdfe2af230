"""A workflow named as its runs' records name it.

On a shared datastore a peer sees the runs of workflows whose files it does
not have: `workflow history search` lists them by the name each record
carries. The commands that take a workflow's name to read its runs
(`workflow history NAME`, `history get NAME`, `history logs NAME`,
`history search --workflow NAME`, `workflow approvals NAME`) find it here
when this clone has no file of that name, so every name a list shows is one
they take."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import NotFoundError
from swamp.workflows import records
from swamp.workflows.files import find_workflow
from swamp.workflows.schema import workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def runs_workflow_id(repo: Repo, name: str) -> str:
    """The id the runs of the workflow ``name`` are filed under: its file's,
    else that of the recorded runs carrying that name (call inside a
    session for the records to be fresh). The file's not-found error when
    neither knows the name."""
    try:
        return workflow_id(find_workflow(repo, name)[1])
    except NotFoundError as no_file:
        found = recorded_id(repo, name)
        if found is None:
            raise no_file from None
        return found


def recorded_id(repo: Repo, name: str) -> str | None:
    """The workflow id whose newest run record names ``name``; None when no
    record does. Two ids with one name (two workflows once so called): the
    one run most recently wins, as `history NAME` would show first."""
    ds = repo.datastore
    newest = None
    for wid in ds.listdir(records.RUNS):
        ids = records.run_ids(ds, wid)
        if not ids:
            continue
        run = records.latest(ds, wid)
        if run.workflowName == name and (newest is None or (run.startedAt, run.id) > (newest.startedAt, newest.id)):
            newest = run
    return newest.workflowId if newest else None
