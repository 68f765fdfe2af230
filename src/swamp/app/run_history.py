"""A workflow's run history, a page at a time, fast at thousands of runs.

``app.workflows.history`` reads and validates every run record of the
workflow on each call (3.5 s at 10,000 runs). A long-lived caller (serve)
keeps a ``workflows.run_index.RunIndex``: a summary row per record, reused
while the record file's size and modification time have not moved, so a
page costs one pull, one listing and (when the directory changed) one
stat per record; only records that changed are read. The rows are the
ones ``workflows.history`` returns, newest first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from swamp.app.dashboard_queries import workflow_runs
from swamp.workflows.run_index import RunIndex

if TYPE_CHECKING:
    from swamp.repo.context import Repo

_FIELDS = ("id", "workflowName", "status", "startedAt", "completedAt", "durationMs", "steps", "failedSteps",
           "initiatedBy")


def index_for(repo: Repo) -> RunIndex:
    """An index whose rows are kept under the checkout's cache (never
    synced), so a restart reads only the records that changed meanwhile."""
    return RunIndex(Path(repo.local_dir) / "cache" / "serve" / "runs")


def history_page(repo: Repo, index: RunIndex, name: str, *, offset: int = 0, limit: int | None = None,
                 status: str | None = None) -> list[dict]:
    """Rows ``offset`` to ``offset + limit`` of the runs of workflow
    ``name`` (newest first), as ``workflows.history`` shapes them."""
    page = workflow_runs(repo, index, name, offset=offset, limit=limit if limit else 1 << 62, status=status)
    return [{k: (r.get(k) or None) if k == "startedAt" else r.get(k) for k in _FIELDS} for r in page.rows]
