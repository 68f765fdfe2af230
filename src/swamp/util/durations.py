"""Durations such as 30m, 12h, 7d, 2w, 3mo, 1y (lifetimes, GC policies,
retention windows)."""

from __future__ import annotations

import re

from swamp.errors import ValidationError

DURATION_RE = re.compile(r"^(\d+)(mo|m|h|d|w|y)$")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}


def duration_seconds(text: str) -> int:
    m = DURATION_RE.match(text) if isinstance(text, str) else None
    if not m:
        raise ValidationError(f"invalid duration {text!r}", hint="use a number and a unit: 30m, 12h, 7d, 2w, 3mo, 1y")
    return int(m.group(1)) * _UNIT_SECONDS[m.group(2)]
