"""Retries and timeouts of model_method steps (docs/workflows.md "Retries
and timeouts"): the keys a step (or, as defaults, the workflow) sets, how
they are checked, and the policy a step runs under.

``retries`` more attempts after a failed one, ``retryDelay`` seconds
before the first of them, multiplied by ``retryBackoff`` (2 unless set)
before each later one; ``timeout`` seconds an attempt may run before its
processes are stopped and it fails "timed out after N s". A step's own key
wins over the workflow's ``stepDefaults``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: the keys, as a step and a workflow spell them
KEYS = ("retries", "retryDelay", "retryBackoff", "timeout")
MAX_RETRIES = 100
MAX_DELAY = 24 * 3600
MAX_BACKOFF = 10
DEFAULT_BACKOFF = 2.0


def count(value: Any) -> Any:
    """``retries``: a whole number from 0 to MAX_RETRIES (YAML's true is not one)."""
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be a whole number of retries (0 to {MAX_RETRIES}), not {value!r}")
    if not 0 <= value <= MAX_RETRIES:
        raise ValueError(f"must be from 0 to {MAX_RETRIES}, not {value}")
    return value


def seconds(value: Any, *, least: float, most: float, zero: bool) -> Any:
    """A number of seconds (30, 0.5), from ``least`` (or above it, unless
    ``zero``) to ``most``; never a string or a boolean."""
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"must be a number of seconds (like 30 or 0.5), not {value!r}")
    if value < least or (not zero and value == least) or value > most:
        low = f"at least {least:g}" if zero else f"more than {least:g}"
        raise ValueError(f"must be {low} and at most {most:g} seconds, not {value:g}")
    return value


def backoff(value: Any) -> Any:
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"must be a number (1 keeps the delay the same, 2 doubles it), not {value!r}")
    if not 1 <= value <= MAX_BACKOFF:
        raise ValueError(f"must be from 1 (the same delay each time) to {MAX_BACKOFF}, not {value:g}")
    return value


def given(obj) -> bool:
    return any(getattr(obj, k) is not None for k in KEYS)


@dataclass(frozen=True)
class Policy:
    """How a step is attempted: ``attempts`` in all (retries + 1)."""

    attempts: int = 1
    delay: float = 0.0
    backoff: float = DEFAULT_BACKOFF
    timeout: float | None = None

    @property
    def plain(self) -> bool:
        """One attempt with no timeout: the step runs as it always did."""
        return self.attempts == 1 and self.timeout is None

    def delay_after(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1, 2, ...)."""
        return min(self.delay * self.backoff ** (attempt - 1), MAX_DELAY)


def policy_for(wf, step) -> Policy:
    """The step's keys, each falling back to the workflow's ``stepDefaults``."""
    defaults = wf.stepDefaults

    def pick(key: str):
        own = getattr(step, key)
        return own if own is not None or defaults is None else getattr(defaults, key)

    retries = pick("retries") or 0
    back = pick("retryBackoff")
    return Policy(attempts=retries + 1, delay=float(pick("retryDelay") or 0),
                  backoff=float(DEFAULT_BACKOFF if back is None else back), timeout=pick("timeout"))


def timed_out(timeout: float) -> str:
    """The error of an attempt that ran out of time."""
    return f"timed out after {timeout:g} s"
