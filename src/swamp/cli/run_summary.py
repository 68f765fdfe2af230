"""A run record, read from a server or followed, printed for a person."""

from __future__ import annotations

from swamp.cli.output import say, table
from swamp.cli.run_record import say_stderr_tails
from swamp.cli.run_resumes import resumed_note


def human_run(run: dict) -> None:
    """A run record (a JSON document) as `workflow run` prints it."""
    say(f"workflow {run['workflowName']}: run {run['id']} {run['status']}"
        + (f" in {run['durationMs']} ms" if run.get("durationMs") is not None else "")
        + (f" (re-runs run {run['rerunOf']})" if run.get("rerunOf") else "") + resumed_note(run))
    rows = [{"job": j["name"], "step": s["name"],
             "status": s["status"] + (f" (attempt {s['attempt']}/{s['maxAttempts']})"
                                      if (s.get("attempt") or 0) > 1 else ""),
             "detail": s.get("skipReason") or s.get("error") or (
                 (s.get("approval") or {}).get("prompt") if s["status"] == "waiting_approval" else None)
             or (f"kept from run {s['reusedFrom']}" if s.get("reusedFrom") else None)}
            for j in run.get("jobs", []) for s in j.get("steps", [])]
    table(rows, ["job", "step", "status", "detail"])
    say_stderr_tails((j["name"], s) for j in run.get("jobs", []) for s in j.get("steps", []))
    if run["status"] == "suspended":
        for w in run.get("approvalRequired", []):
            say(f"waiting for approval: {w['step']} (swamp workflow approve {run['workflowName']} {w['step']} "
                f"--run {run['id']}, or reject)")
        for w in run.get("signalRequired", []):
            where = f"{w['job']}/{w['step']}" if w.get("job") else w["step"]
            say(f"waiting for a signal: {where}: swamp workflow signal {run['workflowName']} {where} --data JSON "
                f"--run {run['id']}")
