"""Schedules: ``--schedule NAME=WORKFLOW@CRON`` fires WORKFLOW at each
tick of CRON (UTC, see cron.py). Every replica runs the same schedules;
for each tick, each replica tries to claim it in the datastore
(``app.schedules.claim``) and only the one that succeeds starts the run, so
a tick fires once however many replicas serve."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from swamp.errors import SwampError, UsageError
from swamp.serve.cron import Cron
from swamp.util.names import check_name


@dataclass(frozen=True)
class Schedule:
    name: str
    workflow: str
    cron: Cron


def parse(spec: str) -> Schedule:
    name, sep, rest = spec.partition("=")
    workflow, at, cron = rest.partition("@")
    if not sep or not at or not workflow or not cron.strip():
        raise UsageError(f"--schedule {spec!r} must be NAME=WORKFLOW@CRON",
                         hint="e.g. --schedule 'nightly=backup@0 3 * * *' (UTC; six fields: seconds first)")
    check_name(name, "schedule name")
    return Schedule(name, workflow, Cron.parse(cron))


def tick_stamp(t: datetime) -> str:
    return t.strftime("%Y%m%dT%H%M%SZ")


class Scheduler:
    def __init__(self, state, schedules: list[Schedule]) -> None:
        from swamp.util.ids import holder

        self.state = state
        self.schedules = schedules
        self.me = f"{holder()}:{os.getpid()}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="swamp-scheduler", daemon=True)

    def start(self) -> None:
        if self.schedules:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(60)

    def _loop(self) -> None:
        from swamp.app import schedules as app_schedules

        now = datetime.now(timezone.utc)
        due = {s.name: s.cron.next_after(now) for s in self.schedules}
        by_name = {s.name: s for s in self.schedules}
        while not self._stop.is_set():
            when = min(due.values())
            wait = (when - datetime.now(timezone.utc)).total_seconds()
            if wait > 0 and self._stop.wait(wait):
                return
            for name in [n for n, t in due.items() if t <= when]:
                s = by_name[name]
                due[name] = s.cron.next_after(when)
                if self._stop.is_set() or self.state.shutting_down:
                    return
                try:
                    claimed = app_schedules.claim(self.state.repo, name, tick_stamp(when), by=self.me)
                except SwampError as e:
                    print(f"swamp serve: schedule {name}: tick {tick_stamp(when)} not claimed: {e.message}",
                          file=sys.stderr, flush=True)
                    continue
                if claimed:
                    self.state.start_workflow(s.workflow, {}, f"schedule:{name}")
