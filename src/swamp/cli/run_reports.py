"""The report and pre-flight check selections of a run (from the options
`swamp.cli.report.run_options` adds) and the lines that say what the reports
did. Without click: `model method run` also runs through the fast lane."""

from __future__ import annotations

from swamp.cli.output import say


def selections(kwargs: dict):
    """(the reports selected, the checks skipped) from the options run_options added
    (popped from ``kwargs``)."""
    from swamp.app.reports import selection

    reports = selection(requested=tuple(kwargs.pop("report_", ()) or ()),
                        skip_all=bool(kwargs.pop("skip_reports", False)),
                        skip=tuple(kwargs.pop("skip_report", ()) or ()))
    checks = (bool(kwargs.pop("skip_checks", False)), tuple(kwargs.pop("skip_check", ()) or ()))
    return reports, checks


def say_reports(outcomes) -> None:
    for o in outcomes:
        if o.status == "succeeded":
            say(f"  report {o.report}: stored as {o.dataName} version {o.version}")
        else:
            where = f" (stored as {o.dataName} version {o.version})" if o.stored and o.dataName else ""
            say(f"  report {o.report} failed{where}: {o.error}")
