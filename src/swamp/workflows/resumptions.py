"""A run says it was resumed: each continuation is recorded in the run's
``resumes`` (records.Resumption), so a run that failed, was resumed from a
step and then succeeded does not look like one that succeeded at once."""

from __future__ import annotations

from swamp.util import clock
from swamp.workflows.records import Resumption, WorkflowRun


def note_resumption(run: WorkflowRun, *, was: str, from_step: str | None, by: str | None) -> None:
    """Record on ``run`` (claimed, about to continue) that it is resumed now."""
    run.resumes = [*(run.resumes or []), Resumption(at=clock.isoformat(), by=by, fromStep=from_step, was=was)]
