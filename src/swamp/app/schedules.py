"""Schedules: claiming a cron tick so that, of any number of servers on one
datastore, exactly one fires it; and workflows' triggers (``trigger.schedule``
in the file, or set with `swamp workflow trigger set`, which wins).

A claim is one session under the schedule's lease: pull, look for the
tick's marker, write it if absent, push. The first replica to publish the
marker fires; the others find it after their pull and do not. A claim
whose push failed is not a claim (another replica may not see it, and may
fire): the tick is skipped rather than risk running twice. Markers older
than the newest KEEP are deleted in the same session.

Since markers are deleted, a marker alone cannot say that an old tick was
fired. So each schedule also keeps its **high-water mark**
(``schedules/<name>/high-water``): the newest tick ever claimed, advanced
in the same session as the marker, under the same lease. A tick at or
below it is never claimed again, marker or not: a replica that stalled
(SIGSTOP, a paused VM) or whose clock lags by many periods finds its old
ticks refused instead of firing them a second time."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from swamp.app.lifecycle import changing, reading
from swamp.errors import NotFoundError, SwampError, UnpublishedError
from swamp.util import clock
from swamp.util.cron import Cron
from swamp.util.ids import holder
from swamp.util.names import check_name
from swamp.workflows.files import find_workflow, iter_workflow_files, load_workflow

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: markers kept per schedule
KEEP = 20


def lease_name(schedule: str) -> str:
    return f"schedule/{schedule}"


def marker_dir(schedule: str) -> str:
    return f"schedules/{schedule}"


def high_water_path(schedule: str) -> str:
    return f"{marker_dir(schedule)}/high-water"


def high_water(ds, schedule: str) -> str | None:
    """The newest tick of ``schedule`` ever claimed (the caller pulled):
    its high-water mark, or the newest marker kept (a datastore from
    before the mark existed), or None."""
    where = marker_dir(schedule)
    found = [n[:-len(".json")] for n in ds.listdir(where) if n.endswith(".json")]
    try:
        mark = json.loads(ds.read_bytes(high_water_path(schedule))).get("tick")
        if isinstance(mark, str):
            found.append(mark)
    except (NotFoundError, ValueError, AttributeError):
        pass
    return max(found, default=None)


def claim(repo: Repo, schedule: str, tick: str, *, by: str) -> bool:
    """True when this caller claimed ``tick`` (a sortable UTC stamp such as
    20261130T120000Z) of ``schedule``, and must fire it. A tick at or below
    the schedule's high-water mark is never claimed (see the module)."""
    check_name(schedule.removeprefix(TRIGGER_PREFIX), "schedule name")
    ds = repo.datastore
    where = marker_dir(schedule)
    try:
        with changing(repo, f"schedule {schedule} {tick}", leases=[lease_name(schedule)]):
            mark = high_water(ds, schedule)
            if ds.exists(f"{where}/{tick}.json") or (mark is not None and tick <= mark):
                return False
            ds.write_bytes(f"{where}/{tick}.json",
                           json.dumps({"tick": tick, "by": by, "claimedAt": clock.isoformat()}).encode())
            ds.write_bytes(high_water_path(schedule),
                           json.dumps({"tick": tick, "by": by, "claimedAt": clock.isoformat()}).encode())
            for old in sorted(n for n in ds.listdir(where) if n.endswith(".json"))[:-KEEP]:
                ds.delete(f"{where}/{old}")
    except UnpublishedError:
        return False
    except SwampError:
        raise
    return True


def claims(repo: Repo, schedule: str) -> list[dict]:
    """The markers kept, oldest first (for status and tests)."""
    ds = repo.datastore
    where = marker_dir(schedule)
    with reading(repo):
        return [json.loads(ds.read_bytes(f"{where}/{n}")) for n in ds.listdir(where) if n.endswith(".json")]


# ------------------------------------------------------------- triggers
#: where `swamp workflow trigger set|remove` keeps a workflow's schedule, in
#: the shared datastore, so every replica sees it at its next pull
TRIGGERS = "triggers"
#: the schedule name of a workflow's trigger (its ticks' lease and markers)
TRIGGER_PREFIX = "trigger-"


def trigger_path(workflow: str) -> str:
    return f"{TRIGGERS}/{workflow}.json"


def trigger_schedule_name(workflow: str) -> str:
    return TRIGGER_PREFIX + workflow


def _file_trigger(wf) -> dict | None:
    t = wf.trigger
    if t is None or not t.schedule:
        return None
    return {"schedule": t.schedule, "inputs": dict(t.inputs)}


def _read_override(ds, workflow: str) -> dict | None:
    try:
        doc = json.loads(ds.read_bytes(trigger_path(workflow)))
    except (NotFoundError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _effective(wf, override: dict | None) -> dict:
    """The trigger in force: the one set with `workflow trigger set` (or
    turned off with `remove`) wins over the workflow file's."""
    if override is not None:
        found = {"schedule": override.get("schedule"), "inputs": override.get("inputs") or {},
                 "source": "set", "setBy": override.get("setBy"), "setAt": override.get("setAt")}
    else:
        found = {**(_file_trigger(wf) or {"schedule": None, "inputs": {}}), "source": "file"}
    if not found["schedule"]:
        found = {**found, "schedule": None, "inputs": {}}
    return {"workflow": wf.name, **found}


def get_trigger(repo: Repo, workflow: str) -> dict:
    """``{workflow, schedule, inputs, source}``: the schedule in force (None:
    none), from the workflow file or from `workflow trigger set`."""
    _, wf = find_workflow(repo, workflow)
    with reading(repo):
        return _effective(wf, _read_override(repo.datastore, wf.name))


def set_trigger(repo: Repo, workflow: str, schedule: str, inputs: dict | None = None) -> dict:
    """Run ``workflow`` at each tick of ``schedule`` (cron, UTC) on every
    `swamp serve` of this datastore, whatever its file says."""
    _, wf = find_workflow(repo, workflow)
    Cron.parse(schedule)
    doc = {"schedule": schedule, "inputs": inputs or {}, "setBy": holder(), "setAt": clock.isoformat()}
    return _write_override(repo, wf, doc, f"workflow trigger set {wf.name}")


def remove_trigger(repo: Repo, workflow: str) -> dict:
    """No schedule for ``workflow`` any more: the one set is dropped, and a
    schedule in its file is turned off (until `workflow trigger set`)."""
    _, wf = find_workflow(repo, workflow)
    doc = None if _file_trigger(wf) is None else {"schedule": None, "setBy": holder(), "setAt": clock.isoformat()}
    return _write_override(repo, wf, doc, f"workflow trigger remove {wf.name}")


def _write_override(repo: Repo, wf, doc: dict | None, command: str) -> dict:
    ds = repo.datastore
    try:
        with changing(repo, command, leases=[lease_name(trigger_schedule_name(wf.name))]):
            if doc is None:
                if ds.exists(trigger_path(wf.name)):
                    ds.delete(trigger_path(wf.name))
            else:
                ds.write_bytes(trigger_path(wf.name), json.dumps(doc, sort_keys=True).encode())
    except UnpublishedError as e:
        raise e.with_value(_effective(wf, doc))
    return _effective(wf, doc)


def workflow_triggers(repo: Repo) -> list[dict]:
    """Every workflow's schedule in force, sorted by workflow: ``{name (its
    schedule name), workflow, schedule, inputs, source}``. One pull; a
    workflow file that does not load is skipped (validate shows why)."""
    out = []
    ds = repo.datastore
    with reading(repo):
        for path in iter_workflow_files(repo):
            try:
                wf = load_workflow(path, repo.root)
            except SwampError:
                continue
            t = _effective(wf, _read_override(ds, wf.name))
            if t["schedule"]:
                out.append({"name": trigger_schedule_name(wf.name), **t})
    return sorted(out, key=lambda t: t["workflow"])
