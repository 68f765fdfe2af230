"""The one clock. Tests replace it with ``set_clock``."""

from __future__ import annotations

import datetime as _dt
import time as _time
from typing import Callable

_now: Callable[[], float] = _time.time


def now() -> float:
    """Seconds since the epoch."""
    return _now()


def isoformat(ts: float | None = None) -> str:
    t = _dt.datetime.fromtimestamp(_now() if ts is None else ts, tz=_dt.timezone.utc)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(s: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def set_clock(fn: Callable[[], float] | None) -> None:
    global _now
    _now = fn or _time.time
