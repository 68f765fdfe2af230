"""The one clock. Tests replace it with ``set_clock``.

``isoformat`` needs no datetime module (its import costs a command ~1 ms):
it gives what ``datetime.fromtimestamp(ts, timezone.utc)
.isoformat(timespec="milliseconds")`` gives, with ``Z`` for ``+00:00``
(tests/unit/test_clock.py compares the two)."""

from __future__ import annotations

import time as _time
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import datetime as _dt

_now: Callable[[], float] = _time.time


def now() -> float:
    """Seconds since the epoch."""
    return _now()


def isoformat(ts: float | None = None) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC) of ``ts``, or of now."""
    ts = _now() if ts is None else ts
    whole = float(int(ts))  # math.modf(ts), without loading math: both parts are exact
    frac = ts - whole
    us = round(frac * 1e6)  # to the microsecond, half to even, as datetime.fromtimestamp
    if us >= 1_000_000:
        whole, us = whole + 1, us - 1_000_000
    elif us < 0:
        whole, us = whole - 1, us + 1_000_000
    t = _time.gmtime(int(whole))
    if not 1 <= t.tm_year <= 9999:  # datetime's range: what parse_iso can read back
        raise ValueError(f"year {t.tm_year} is out of range")
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
            f".{us // 1000:03d}Z")


def parse_iso(s: str) -> _dt.datetime:
    import datetime as _dt

    return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def set_clock(fn: Callable[[], float] | None) -> None:
    global _now
    _now = fn or _time.time
