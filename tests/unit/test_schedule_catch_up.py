"""A schedule's loop that wakes after missing ticks fires only the latest
(serve/scheduler.latest_due), and a tick at or below the schedule's
high-water mark is never claimed (app/schedules.claim)."""

from __future__ import annotations

from datetime import datetime, timezone

from tests.helpers import init_repo


def test_a_loop_that_stalled_fires_only_the_latest_missed_tick():
    from swamp.serve.cron import Cron
    from swamp.serve.scheduler import latest_due

    every_minute = Cron.parse("* * * * *")
    first = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    woke = datetime(2026, 11, 30, 12, 30, 30, tzinfo=timezone.utc)
    assert latest_due(every_minute, first, woke) == (datetime(2026, 11, 30, 12, 30, tzinfo=timezone.utc), 30)
    assert latest_due(every_minute, first, first) == (first, 0)  # on time: that tick, none left out


def test_a_tick_below_the_newest_claimed_is_refused_even_within_the_kept_markers(tmp_path):
    from swamp.app import schedules
    from swamp.repo.context import Repo

    repo = Repo.open(init_repo(tmp_path / "r"))
    assert schedules.claim(repo, "pulse", "20261130T120500Z", by="ahead")
    assert schedules.claim(repo, "pulse", "20261130T120400Z", by="lagging") is False  # its clock lags
    assert schedules.claim(repo, "pulse", "20261130T120600Z", by="lagging")
    assert [c["tick"] for c in schedules.claims(repo, "pulse")] == ["20261130T120500Z", "20261130T120600Z"]
