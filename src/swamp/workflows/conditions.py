"""The condition algebra of ``dependsOn``, and what a dependency's status
is when it stands for several things (a forEach step's expansions)."""

from __future__ import annotations

from typing import Iterable

from swamp.workflows.schema import Condition

TERMINAL = frozenset({"succeeded", "failed", "skipped"})


def holds(cond: Condition, status: str) -> bool:
    """Whether ``cond`` holds for a dependency that ended with ``status``
    (succeeded, failed or skipped). ``completed`` is succeeded or failed."""
    t = cond.type
    if t == "always":
        return True
    if t == "succeeded":
        return status == "succeeded"
    if t == "failed":
        return status == "failed"
    if t == "completed":
        return status in ("succeeded", "failed")
    if t == "skipped":
        return status == "skipped"
    if t == "and":
        return all(holds(c, status) for c in cond.conditions or ())
    if t == "or":
        return any(holds(c, status) for c in cond.conditions or ())
    if t == "not":
        return not holds(cond.condition, status)
    raise ValueError(f"unknown condition type {t!r}")


def aggregate(statuses: Iterable[str]) -> str:
    """One status for a group (a forEach step's expansions, a job's steps
    for a dependent job): not finished while any member is not; failed if
    any failed; skipped if all were skipped; succeeded otherwise (an empty
    group succeeded: there was nothing to do)."""
    statuses = list(statuses)
    if any(s not in TERMINAL for s in statuses):
        return "pending"
    if "failed" in statuses:
        return "failed"
    if statuses and all(s == "skipped" for s in statuses):
        return "skipped"
    return "succeeded"


def skip_reason(cond: Condition) -> str:
    """``dependency`` when a dependency did not succeed as the default
    condition asks; ``condition`` when an explicit other condition is not met
    (a cleanup step after a success, say): that is the flow working."""
    return "dependency" if cond.type == "succeeded" else "condition"
