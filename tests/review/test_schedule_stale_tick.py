"""Review (round after e212c4b): of any number of servers on one
datastore, exactly one fires each cron tick (app/schedules.claim).

Hole: a claim keeps only the newest KEEP (20) tick markers and deletes the
rest in the same session, and a tick's marker is the only thing that says
it was fired. A replica that looks at an older tick (its scheduler loop
stalled: SIGSTOP, a paused VM, a laptop lid; it then works through every
tick it missed, serve/scheduler.py; or its clock lags by more than KEEP
periods) finds no marker and claims the tick again: the workflow runs a
second time for a tick another replica fired long ago."""

from __future__ import annotations

from tests.helpers import init_repo


def test_a_tick_fired_once_is_never_claimed_again(tmp_path):
    from swamp.app import schedules
    from swamp.repo.context import Repo

    repo = Repo.open(init_repo(tmp_path / "r"))
    # every minute from 12:00: replica "up" fires each tick as it comes
    ticks = [f"20261130T12{m:02d}00Z" for m in range(schedules.KEEP + 1)]
    assert all(schedules.claim(repo, "every-minute", t, by="up") for t in ticks)
    # replica "stalled" wakes up and catches up from the first tick it missed
    assert schedules.claim(repo, "every-minute", ticks[0], by="stalled") is False
