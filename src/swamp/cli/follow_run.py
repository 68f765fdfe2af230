"""`swamp workflow history get ID --follow`: a run's steps as they change,
until the run ends (or suspends, waiting for someone), read from the
datastore here or from a server's API (--server).

A human sees a line per step change, then the run as `workflow run`
prints it; --json prints one JSON object a line: each change
({"runId", "job", "step", "status"}), then the run's record."""

from __future__ import annotations

import json
import sys
import time
from typing import Callable

from swamp.cli.output import say

#: where following stops: the run ended, or waits for a decision or a signal
STOPS = ("succeeded", "failed", "cancelled", "interrupted", "suspended")
POLL_S = 0.5
MARKS = {"running": "…", "succeeded": "✓", "failed": "✗", "skipped": "-", "waiting_approval": "?",
         "waiting_signal": "?"}


def follow(state, fetch: Callable[[], dict], poll_s: float = POLL_S) -> None:
    """Print ``fetch()``'s run as it changes; exit 1 when it did not succeed
    (a suspended run exits 0: it waits, as `workflow run` leaves it)."""
    from swamp.cli.run_summary import human_run

    seen: dict[str, str] = {}
    while True:
        doc = fetch()
        for j in doc.get("jobs", []):
            for s in j.get("steps", []):
                where = f"{j['name']}/{s['name']}"
                if seen.get(where) == s["status"] or (where not in seen and s["status"] == "pending"):
                    seen.setdefault(where, s["status"])
                    continue
                seen[where] = s["status"]
                if state.json:
                    _line({"runId": doc["id"], "job": j["name"], "step": s["name"], "status": s["status"]})
                elif not state.quiet:
                    extra = s.get("skipReason") or s.get("error")
                    say(f"  {MARKS.get(s['status'], ' ')} {where} {s['status']}" + (f": {extra}" if extra else ""))
                    if s["status"] == "failed" and s.get("stderrTail"):
                        say(f"      stderr: {s['stderrTail']}")
        if doc["status"] in STOPS:
            break
        time.sleep(poll_s)
    if state.json:
        _line(doc)
    else:
        human_run(doc)
    if doc["status"] in ("failed", "cancelled", "interrupted"):
        sys.exit(1)


def _line(doc: dict) -> None:
    from swamp.vault.redact import redact_text

    sys.stdout.write(redact_text(json.dumps(doc, sort_keys=True, default=str)) + "\n")
    sys.stdout.flush()
