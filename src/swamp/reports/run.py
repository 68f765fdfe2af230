"""Choosing the reports of a run, and running them.

Which reports run: those the model definition (for a method run) or the
workflow file (for a workflow run) lists under ``reports:``, plus each
``--report NAME``; minus each ``--skip-report NAME``; none with
``--skip-reports``. Nothing runs by default. Every name is checked before
the run starts: an unknown one, or one of the other scope, is refused.

A report that fails (raises, or returns something that is not a report) is
recorded as a failed report, stored like any other, and never changes the
run's own outcome or loses what the run wrote."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from swamp.errors import ValidationError
from swamp.util import clock
from swamp.vault.redact import redact_text

if TYPE_CHECKING:
    from swamp.reports.api import ReportContext, ReportType


class Selection(NamedTuple):
    """The report options of one run command (immutable)."""

    requested: tuple[str, ...] = ()
    skip_all: bool = False
    skip: tuple[str, ...] = ()


class Outcome:
    """How one report of a run went: ``status`` is succeeded or failed;
    where it was stored (``dataName``, ``version``) unless ``stored`` is
    false. (Plain classes here, not dataclasses: the dataclasses module
    imports inspect, ~4 ms of a command.)"""

    def __init__(self, report: str, status: str, dataName: str | None = None, version: int | None = None,
                 error: str | None = None, stored: bool = True) -> None:
        self.report = report
        self.status = status
        self.dataName = dataName
        self.version = version
        self.error = error
        self.stored = stored

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return "Outcome(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"

    def to_json(self) -> dict:
        out = {"report": self.report, "status": self.status}
        if self.dataName is not None:
            out.update(dataName=self.dataName, version=self.version)
        if self.error:
            out["error"] = self.error
        if not self.stored:
            out["stored"] = False
        return out


def choose(registry, scope: str, declared, selection: Selection | None, where: str) -> list[ReportType]:
    """The report types to run after a run of ``scope``. ``declared`` comes
    from the definition or workflow file named by ``where``."""
    selection = selection or Selection()
    declared = list(declared or [])
    chosen: list[ReportType] = []
    for name, origin in [(n, where) for n in declared] + [(n, "--report") for n in selection.requested]:
        r = registry.get(name)
        if r.scope != scope:
            raise ValidationError(f"report {name!r} ({origin}) runs after {r.scope} runs, not after a {scope} run",
                                  hint=f"list the {scope} reports with 'swamp report search'")
        if r not in chosen:
            chosen.append(r)
    for name in selection.skip:
        registry.get(name)  # a typo is refused, not ignored
    if selection.skip_all:
        return []
    return [r for r in chosen if r.name not in selection.skip]


def run_reports(data, types: list[ReportType], ctx: ReportContext, run_id: str, owner: dict) -> list[Outcome]:
    """Render and store each report. Never raises for a report's failure:
    it is stored (when the store works) and returned as a failed outcome."""
    # here, not at import: a run that selects no report never loads them
    import traceback

    from swamp.reports import store
    from swamp.reports.api import normalise

    outcomes = []
    for r in types:
        doc = {"report": r.name, "scope": r.scope, "runId": run_id, "runStatus": ctx.status,
               "createdAt": clock.isoformat()}
        try:
            if r.fn is None:
                raise TypeError(f"report {r.name} has no render function")
            rendered = normalise(r.name, r.fn(ctx))
            doc.update(status="succeeded", markdown=redact_text(rendered.markdown),
                       json=_redacted(rendered.data))
            outcome = Outcome(r.name, "succeeded")
        except Exception as e:  # the report's own failure: recorded, the run is unchanged
            error = redact_text(f"{type(e).__name__}: {e}")
            trace = redact_text("".join(traceback.format_exception(e)).rstrip())
            doc.update(status="failed", error=error, traceback=trace,
                       markdown=f"# {r.name}: failed\n\n```\n{error}\n```\n", json={})
            outcome = Outcome(r.name, "failed", error=error)
        try:
            rec = store.write(data, doc, **owner)
            outcome.dataName, outcome.version = rec.meta.name, rec.meta.version
        except Exception as e:  # could not store it: say so, the run stands
            outcome.stored = False
            outcome.status = "failed"
            outcome.error = (outcome.error + "; " if outcome.error else "") + f"not stored: {type(e).__name__}: {e}"
        outcomes.append(outcome)
    return outcomes


def _redacted(value):
    import json

    return json.loads(redact_text(json.dumps(value, default=str)))
