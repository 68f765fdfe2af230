"""How a person is told that a run was resumed (its record's ``resumes``),
in every place that prints a run's line."""

from __future__ import annotations

_AFTER = {"failed": " after it failed", "cancelled": " after it was cancelled",
          "interrupted": " after it was interrupted"}


def resumed_note(doc: dict) -> str:
    """' (resumed from STEP after it failed)', ' (resumed 2 times, last where
    it waited)', or '' for a run never resumed."""
    resumes = doc.get("resumes") or []
    if not resumes:
        return ""
    last = resumes[-1]
    times = f" {len(resumes)} times, last" if len(resumes) > 1 else ""
    where = f" from {last['fromStep']}" if last.get("fromStep") else " where it waited"
    return f" (resumed{times}{where}{_AFTER.get(last.get('was'), '')})"
