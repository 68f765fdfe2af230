"""The run page shows a step waiting for a signal: its prompt, how long it
may wait, and the command that sends it a message; once settled, the
outcome and who settled it (docs/signals.md)."""

from __future__ import annotations

from swamp.serve.dashboard.pages import _environment
from swamp.serve.dashboard.views import _groups

BASE = {"title": "t", "csrf": "x", "auth_mode": "none", "who": "anonymous", "logged_in": True}


def _page(step: dict) -> str:
    run = {"id": "r1", "status": "suspended", "startedAt": "2026-11-30T12:00:00Z",
           "jobs": [{"name": "main", "status": "waiting_signal", "steps": [step]}]}
    jobs = [{**j, "groups": _groups(j["steps"])} for j in run["jobs"]]
    return _environment().get_template("run.html").render(
        **BASE, nav="workflows", workflow="deploy", run=run, jobs=jobs, log="", total=1, waiting=[],
        live=False, can_approve=False, can_resume=False, can_cancel=False)


def test_a_waiting_step_says_how_to_signal_it():
    html = _page({"name": "release", "task": "wait_for_signal", "status": "waiting_signal",
                  "signal": {"prompt": "which <version>?", "requestedAt": "2026-11-30T12:00:00Z",
                             "timeoutSeconds": 60}})
    assert "s-waiting_signal" in html
    assert "which &lt;version&gt;?" in html and "<version>" not in html
    assert "at most 60 s" in html
    assert "swamp workflow signal deploy main/release --data JSON" in html


def test_a_settled_step_names_who_settled_it():
    html = _page({"name": "release", "task": "wait_for_signal", "status": "succeeded",
                  "signal": {"requestedAt": "2026-11-30T12:00:00Z", "outcome": "signalled",
                             "message": {"version": "1.4.2"}, "by": "alice@ci", "at": "2026-11-30T12:00:05Z"}})
    assert "<strong>signalled</strong> by alice@ci" in html
    assert "swamp workflow signal" not in html
