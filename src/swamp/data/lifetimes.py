"""Which versions garbage collection removes.

Phase 1: versions past their lifetime (a duration) expire. Phase 2: the
name's policy: keep the newest N, or drop versions older than a duration.
The newest version of a name is never removed by phase 2."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swamp.data.metadata import DataMetadata
from swamp.util.durations import DURATION_RE, duration_seconds
from swamp.util.clock import parse_iso


def _age_s(meta: DataMetadata, now: float) -> float:
    return now - parse_iso(meta.createdAt).timestamp()


def expired(meta: DataMetadata, now: float, live_runs: set[str] | None = None) -> bool:
    """A duration lifetime past its age; a ``job`` or ``workflow`` lifetime
    once the workflow run that wrote it is deleted (``live_runs``: the ids
    of the run records that exist; None: not known, nothing expires so)."""
    if meta.lifetime in ("job", "workflow"):
        run_id = (meta.owner or {}).get("workflowRunId") if isinstance(meta.owner, dict) else \
            getattr(meta.owner, "workflowRunId", None)
        return live_runs is not None and bool(run_id) and run_id not in live_runs
    return bool(DURATION_RE.match(meta.lifetime)) and _age_s(meta, now) > duration_seconds(meta.lifetime)


def versions_to_collect(metas: list[DataMetadata], now: float, live_runs: set[str] | None = None) -> list[int]:
    """``metas`` ascending by version. The policy of the newest version rules."""
    if not metas:
        return []
    doomed = {m.version for m in metas if expired(m, now, live_runs)}
    survivors = [m for m in metas if m.version not in doomed]
    policy = metas[-1].garbageCollection
    if survivors and policy is not None:
        newest = survivors[-1].version
        if isinstance(policy, int):
            doomed.update(m.version for m in survivors[:-policy] if m.version != newest)
        else:
            limit = duration_seconds(policy)
            doomed.update(m.version for m in survivors if m.version != newest and _age_s(m, now) > limit)
    return sorted(doomed)


def versions_to_prune(metas: list[DataMetadata], now: float, *, older_than: str | None = None,
                      keep: int | None = None) -> list[int]:
    """``data prune``: versions older than ``older_than``, or beyond the
    newest ``keep``; with both, those that are both. The newest version of
    a name always stays. ``metas`` ascending by version."""
    if not metas or (older_than is None and keep is None):
        return []
    newest = metas[-1].version
    candidates = {m.version for m in metas}
    if keep is not None:
        candidates &= {m.version for m in metas[:-keep]} if keep > 0 else candidates
    if older_than is not None:
        limit = duration_seconds(older_than)
        candidates &= {m.version for m in metas if _age_s(m, now) > limit}
    candidates.discard(newest)
    return sorted(candidates)
