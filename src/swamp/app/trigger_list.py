"""Schedules in plain sight: every workflow's schedule in force (its file's
``trigger.schedule`` or `swamp workflow trigger set`), with when it fires
next and how its last scheduled run went. What `workflow trigger list`, the
dashboard's workflows page and serve's start-up lines show.

A ``--schedule`` option lives in one server's command line, not in the
datastore: serve lists those at start; here only the workflows' own."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from swamp.app.lifecycle import reading
from swamp.app.schedules import workflow_triggers
from swamp.errors import SwampError
from swamp.util.cron import Cron
from swamp.workflows import records
from swamp.workflows.files import find_workflow
from swamp.workflows.schema import workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def next_fire(cron_text: str, now: datetime | None = None) -> str | None:
    """The next tick of ``cron_text`` after ``now`` (UTC, ISO 8601), or None
    when the expression does not parse (serve ignores it and says so)."""
    try:
        tick = Cron.parse(cron_text).next_after(now or datetime.now(timezone.utc))
    except SwampError:
        return None
    return tick.strftime("%Y-%m-%dT%H:%M:%SZ")


def last_scheduled_run(ds, workflow_id: str, schedule_name: str) -> dict | None:
    """The newest run a schedule started (its initiatedBy is schedule:NAME)."""
    for run in records.history(ds, workflow_id):
        if run.initiatedBy == f"schedule:{schedule_name}":
            return {"id": run.id, "status": run.status, "startedAt": run.startedAt}
    return None


def trigger_rows(repo: Repo) -> list[dict]:
    """``{name, workflow, schedule, inputs, source, nextFire, lastRun}`` for
    each workflow with a schedule in force, sorted by workflow."""
    found = workflow_triggers(repo)  # one pull
    now = datetime.now(timezone.utc)
    out = []
    with reading(repo):
        for t in found:
            wid = workflow_id(find_workflow(repo, t["workflow"])[1])
            out.append({"name": t["name"], "workflow": t["workflow"], "schedule": t["schedule"],
                        "inputs": t["inputs"], "source": t["source"], "nextFire": next_fire(t["schedule"], now),
                        "lastRun": last_scheduled_run(repo.datastore, wid, t["name"])})
    return sorted(out, key=lambda r: r["workflow"])
