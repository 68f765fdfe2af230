"""Schedules: ``--schedule NAME=WORKFLOW@CRON`` fires WORKFLOW at each
tick of CRON (UTC, see util/cron.py), and so does each workflow's trigger
(``trigger.schedule`` in its file, or `swamp workflow trigger set`, which
wins; ``app.schedules.workflow_triggers``), looked at again every
REFRESH_S seconds. Every replica runs the same schedules; for each tick,
each replica tries to claim it in the datastore (``app.schedules.claim``)
and only the one that succeeds starts the run, so a tick fires once however
many replicas serve. A loop that wakes after missing ticks (it stalled, or
the machine slept) fires only the latest of them; a tick at or below the
schedule's high-water mark in the datastore is never fired again."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from swamp.errors import SwampError, UsageError
from swamp.serve.cron import Cron
from swamp.util.names import check_name

#: how often the workflows' triggers are read again (files and the datastore)
REFRESH_S = float(os.environ.get("SWAMP_SERVE_TRIGGER_REFRESH_S", "5"))


@dataclass(frozen=True)
class Schedule:
    name: str
    workflow: str
    cron: Cron
    inputs: dict = field(default_factory=dict, compare=False, hash=False)
    #: what it fires with, to tell a changed trigger from the same one
    key: str = ""


def parse(spec: str) -> Schedule:
    name, sep, rest = spec.partition("=")
    workflow, at, cron = rest.partition("@")
    if not sep or not at or not workflow or not cron.strip():
        raise UsageError(f"--schedule {spec!r} must be NAME=WORKFLOW@CRON",
                         hint="e.g. --schedule 'nightly=backup@0 3 * * *' (UTC; six fields: seconds first)")
    check_name(name, "schedule name")
    if name.startswith("trigger-"):
        raise UsageError(f"--schedule {name}: names starting with trigger- are the workflows' own triggers",
                         hint="choose another NAME")
    return Schedule(name, workflow, Cron.parse(cron), key=spec)


def tick_stamp(t: datetime) -> str:
    return t.strftime("%Y%m%dT%H%M%SZ")


#: at most this many missed ticks are stepped over to find the latest
CATCH_UP_LIMIT = 100_000


def latest_due(cron: Cron, first: datetime, now: datetime) -> tuple[datetime, int]:
    """The latest tick of ``cron`` from ``first`` (due) up to ``now``, and
    how many earlier ones it leaves out: a loop that stalled (SIGSTOP, a
    paused VM) fires at most the latest tick it missed, never each one."""
    tick, missed = first, 0
    while missed < CATCH_UP_LIMIT:
        later = cron.next_after(tick)
        if later > now:
            break
        tick, missed = later, missed + 1
    return tick, missed


class Scheduler:
    def __init__(self, state, schedules: list[Schedule], *, triggers: bool = True) -> None:
        from swamp.util.ids import holder

        self.state = state
        self.schedules = schedules
        self.triggers = triggers
        self.me = f"{holder()}:{os.getpid()}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="swamp-scheduler", daemon=True)
        self._known: dict[str, Schedule] = {s.name: s for s in schedules}

    def start(self) -> None:
        if self.schedules or self.triggers:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(60)

    def current(self) -> dict[str, Schedule]:
        """The schedules in force: the --schedule options and the workflows'
        triggers. When the triggers cannot be read, the last ones known."""
        out = {s.name: s for s in self.schedules}
        if self.triggers:
            from swamp.app import schedules as app_schedules

            try:
                found = app_schedules.workflow_triggers(self.state.repo)
            except SwampError as e:
                _log(f"could not read the workflows' triggers (keeping the last known): {e.message}")
                return dict(self._known)
            import json

            for t in found:
                try:
                    out[t["name"]] = Schedule(t["name"], t["workflow"], Cron.parse(t["schedule"]), t["inputs"],
                                              key=json.dumps([t["schedule"], t["inputs"]], sort_keys=True))
                except SwampError as e:
                    _log(f"workflow {t['workflow']}: trigger {t['schedule']!r} ignored: {e.message}")
        for name in sorted(set(out) - set(self._known)):
            after = datetime.now(timezone.utc)
            _log(f"schedule {name}: runs {out[name].workflow} at {out[name].cron.text!r} (UTC), "
                 f"next {out[name].cron.next_after(after).strftime('%Y-%m-%dT%H:%M:%SZ')}")
        for name in sorted(set(self._known) - set(out)):
            _log(f"schedule {name}: removed")
        self._known = out
        return out

    def _loop(self) -> None:
        from swamp.app import schedules as app_schedules

        due: dict[str, tuple[Schedule, datetime]] = {}
        refreshed = float("-inf")
        while not self._stop.is_set():
            if time.monotonic() - refreshed >= REFRESH_S:
                refreshed = time.monotonic()
                now = datetime.now(timezone.utc)
                current = self.current()
                for name in [n for n, (s, _) in due.items() if current.get(n) != s or current[n].key != s.key]:
                    del due[name]
                for name, s in current.items():
                    if name not in due:
                        due[name] = (s, s.cron.next_after(now))
            next_refresh = refreshed + REFRESH_S - time.monotonic()
            if not due:
                if self._stop.wait(max(0.05, next_refresh)):
                    return
                continue
            when = min(t for _, t in due.values())
            wait = (when - datetime.now(timezone.utc)).total_seconds()
            if wait > 0:
                if self._stop.wait(min(wait, max(0.05, next_refresh))):
                    return
                if datetime.now(timezone.utc) < when:
                    continue  # time to look at the triggers again first
            for name in [n for n, (_, t) in due.items() if t <= when]:
                s = due[name][0]
                tick, missed = latest_due(s.cron, when, datetime.now(timezone.utc))
                if missed:
                    _log(f"schedule {name}: {missed} tick(s) missed before {tick_stamp(tick)} are not fired")
                due[name] = (s, s.cron.next_after(tick))
                if self._stop.is_set() or self.state.shutting_down:
                    return
                try:
                    claimed = app_schedules.claim(self.state.repo, name, tick_stamp(tick), by=self.me)
                except SwampError as e:
                    _log(f"schedule {name}: tick {tick_stamp(tick)} not claimed: {e.message}")
                    continue
                if claimed:
                    self.state.start_workflow(s.workflow, dict(s.inputs), f"schedule:{name}")


def _log(text: str) -> None:
    print(f"swamp serve: {text}", file=sys.stderr, flush=True)
