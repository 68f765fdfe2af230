"""Schedules: claiming a cron tick so that, of any number of servers on one
datastore, exactly one fires it.

A claim is one session under the schedule's lease: pull, look for the
tick's marker, write it if absent, push. The first replica to publish the
marker fires; the others find it after their pull and do not. A claim
whose push failed is not a claim (another replica may not see it, and may
fire): the tick is skipped rather than risk running twice. Markers older
than the newest KEEP are deleted in the same session."""

from __future__ import annotations

import json

from swamp.app.lifecycle import changing
from swamp.errors import SwampError, UnpublishedError
from swamp.util import clock
from swamp.util.names import check_name

#: markers kept per schedule
KEEP = 20


def lease_name(schedule: str) -> str:
    return f"schedule/{schedule}"


def marker_dir(schedule: str) -> str:
    return f"schedules/{schedule}"


def claim(repo, schedule: str, tick: str, *, by: str) -> bool:
    """True when this caller claimed ``tick`` (a sortable UTC stamp such as
    20261130T120000Z) of ``schedule``, and must fire it."""
    check_name(schedule, "schedule name")
    ds = repo.datastore
    where = marker_dir(schedule)
    try:
        with changing(repo, f"schedule {schedule} {tick}", leases=[lease_name(schedule)]):
            if ds.exists(f"{where}/{tick}.json"):
                return False
            ds.write_bytes(f"{where}/{tick}.json",
                           json.dumps({"tick": tick, "by": by, "claimedAt": clock.isoformat()}).encode())
            for old in [n for n in ds.listdir(where) if n.endswith(".json")][:-KEEP]:
                ds.delete(f"{where}/{old}")
    except UnpublishedError:
        return False
    except SwampError:
        raise
    return True


def claims(repo, schedule: str) -> list[dict]:
    """The markers kept, oldest first (for status and tests)."""
    from swamp.app.lifecycle import reading

    ds = repo.datastore
    where = marker_dir(schedule)
    with reading(repo):
        return [json.loads(ds.read_bytes(f"{where}/{n}")) for n in ds.listdir(where) if n.endswith(".json")]
