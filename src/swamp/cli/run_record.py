"""A workflow run record as `workflow history get` shows it to a person:
the run's line (who, when, what it re-runs, why it failed), a row per
step (its attempt when it was tried more than once, what a re-run kept),
and the attempts of each retried step. --json prints the record itself."""

from __future__ import annotations

from swamp.cli.output import say, table
from swamp.cli.run_resumes import resumed_note


def say_run_record(doc: dict) -> None:
    took = f" in {doc['durationMs']} ms" if doc.get("durationMs") is not None else ""
    say(f"workflow {doc['workflowName']}: run {doc['id']} {doc['status']}{took}{resumed_note(doc)}")
    facts = [("started", doc.get("startedAt")), ("by", doc.get("initiatedBy")),
             ("continued by", doc.get("resumedBy")), ("cancelled by", doc.get("cancelledBy")),
             ("re-runs run", doc.get("rerunOf")), ("nested in run", doc.get("parentRunId"))]
    say(", ".join(f"{k} {v}" for k, v in facts if v))
    if doc.get("failureReason"):
        say(f"failed at {doc.get('failedStep', '?')}: {doc['failureReason']}")
    rows, retried = [], []
    for j in doc.get("jobs", []):
        for s in j.get("steps", []):
            attempt = s.get("attempt") or 0
            status = s["status"] + (f" (attempt {attempt}/{s.get('maxAttempts')})" if attempt > 1 else "")
            detail = (s.get("skipReason") or s.get("error")
                      or ((s.get("approval") or {}).get("prompt") if s["status"] == "waiting_approval" else None)
                      or (f"kept from run {s['reusedFrom']}" if s.get("reusedFrom") else None))
            rows.append({"job": j["name"], "step": s["name"], "status": status, "worker": s.get("worker"),
                         "duration": f"{s['durationMs']} ms" if s.get("durationMs") is not None else None,
                         "detail": detail})
            if len(s.get("attempts") or []) > 1:
                retried.append((f"{j['name']}/{s['name']}", s["attempts"]))
    columns = ["job", "step", "status", "duration", "detail"]
    if any(r["worker"] for r in rows):
        columns.insert(3, "worker")
    table(rows, columns)
    say_stderr_tails((j["name"], s) for j in doc.get("jobs", []) for s in j.get("steps", []))
    for w in doc.get("approvalRequired") or []:
        say(f"waiting for approval: {w['job']}/{w['step']}: {w.get('prompt')}")
    for w in doc.get("signalRequired") or []:
        say(f"waiting for a signal: {w['job']}/{w['step']}" + (f": {w['prompt']}" if w.get("prompt") else "")
            + (f" (until {w['deadline']})" if w.get("deadline") else ""))
    for where, attempts in retried:
        say(f"attempts of {where}:")
        for a in attempts:
            took = f", {a['durationMs']} ms" if a.get("durationMs") is not None else ""
            say(f"  {a['number']}. {a['status']}{took}" + (f": {a['error']}" if a.get("error") else ""))


def say_stderr_tails(steps) -> None:
    """Under a run's table, the last lines of stderr of each failed command
    step (its ``stderrTail``), one line each: ``steps`` is (job name, step
    document) pairs."""
    for job, s in steps:
        if s.get("stderrTail"):
            say(f"stderr of {job}/{s['name']}: {s['stderrTail']}")
