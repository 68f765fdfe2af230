"""Lifetimes, garbage-collection policies and method kinds: the small
vocabulary a model type declares for its data and methods."""

from __future__ import annotations

from swamp.errors import ValidationError
from swamp.util.durations import DURATION_RE, duration_seconds

NAMED_LIFETIMES = ("ephemeral", "infinite", "job", "workflow")

METHOD_KINDS = ("create", "read", "update", "delete", "list", "action")
_KIND_BY_NAME = {
    "create": "create",
    **{n: "read" for n in ("get", "read", "describe", "show")},
    **{n: "update" for n in ("update", "patch")},
    **{n: "delete" for n in ("delete", "destroy", "remove")},
    **{n: "list" for n in ("list", "search", "find")},
}


def check_lifetime(value: str) -> str:
    if value in NAMED_LIFETIMES:
        return value
    if isinstance(value, str) and DURATION_RE.match(value):
        return "workflow" if duration_seconds(value) == 0 else value
    raise ValidationError(
        f"invalid lifetime {value!r}",
        hint=f"use one of {', '.join(NAMED_LIFETIMES)} or a duration such as 7d",
    )


def check_gc_policy(value) -> int | str | None:
    """None keeps every version; an int N keeps the newest N; a duration
    drops versions older than it (never the newest)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValidationError(f"invalid garbage-collection policy {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValidationError("a garbage-collection count keeps at least 1 version")
        return value
    if isinstance(value, str):
        duration_seconds(value)
        return value
    raise ValidationError(f"invalid garbage-collection policy {value!r}")


def infer_kind(method_name: str) -> str:
    return _KIND_BY_NAME.get(method_name, "action")
