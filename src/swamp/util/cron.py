"""Cron expressions, in UTC: five fields (minute hour day-of-month month
day-of-week) or six with seconds first. Each field is ``*``, a number, a
range ``a-b``, a step ``*/n`` or ``a-b/n``, or a comma list of those.
Day-of-week is 0-6 from Sunday (7 is Sunday too). As in cron, when both
day fields are restricted a day matching either one fires."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from swamp.errors import ValidationError

_RANGES = [(0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
_NAMES = ["second", "minute", "hour", "day of month", "month", "day of week"]


def _field(text: str, lo: int, hi: int, what: str) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if base == "*":
                a, b = lo, hi
            elif "-" in base:
                a, b = (int(x) for x in base.split("-", 1))
            else:
                a = b = int(base)
        except ValueError:
            raise ValidationError(f"cron {what}: {part!r} is not a number, range or step") from None
        if step < 1 or a < lo or b > hi or a > b:
            raise ValidationError(f"cron {what}: {part!r} is outside {lo}-{hi}")
        out.update(range(a, b + 1, step))
    return frozenset(out)


@dataclass(frozen=True)
class Cron:
    text: str
    seconds: frozenset
    minutes: frozenset
    hours: frozenset
    days: frozenset
    months: frozenset
    weekdays: frozenset
    any_day: bool
    any_weekday: bool

    @classmethod
    def parse(cls, text: str) -> "Cron":
        fields = text.split()
        if len(fields) == 5:
            fields = ["0", *fields]
        if len(fields) != 6:
            raise ValidationError(f"cron {text!r} has {len(text.split())} fields",
                                  hint="five (minute hour day month weekday) or six (seconds first)")
        sets = [_field(f, lo, hi, what) for f, (lo, hi), what in zip(fields, _RANGES, _NAMES)]
        weekdays = frozenset(d % 7 for d in sets[5])
        return cls(text, *sets[:5], weekdays, fields[3] == "*", fields[5] == "*")

    def _day_ok(self, d: datetime) -> bool:
        dom = d.day in self.days
        dow = (d.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow

    def next_after(self, t: datetime) -> datetime:
        """The first time strictly after ``t`` (UTC) that matches."""
        t = t.astimezone(timezone.utc).replace(microsecond=0) + timedelta(seconds=1)
        day = t.replace(hour=0, minute=0, second=0)
        for _ in range(366 * 8):  # leap-day schedules fire at least every 8 years
            if day.month in self.months and self._day_ok(day):
                for h in sorted(self.hours):
                    for m in sorted(self.minutes):
                        for s in sorted(self.seconds):
                            cand = day.replace(hour=h, minute=m, second=s)
                            if cand >= t:
                                return cand
            day += timedelta(days=1)
        raise ValidationError(f"cron {self.text!r} never fires")
