"""The report types shipped with swamp, written with the public API."""

from __future__ import annotations

from swamp.reports.api import Report, ReportContext, ReportType


def _ms(value) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value} ms"


def _cell(value) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ")


method_summary = ReportType("method-summary", scope="method",
                            description="A method run: its outcome, duration, the data it wrote, its error")


@method_summary.render
def _method_summary(ctx: ReportContext) -> Report:
    run = ctx.run
    data = [{"name": d["name"], "version": d["version"], "kind": d["kind"]} for d in ctx.data]
    doc = {"model": run.get("modelName"), "method": run.get("methodName"), "status": run.get("status"),
           "outputId": run.get("id"), "startedAt": run.get("startedAt"), "durationMs": run.get("durationMs"),
           "data": data, "error": run.get("error")}
    lines = [f"# {doc['model']}.{doc['method']}: {doc['status']}", "",
             f"- output: `{doc['outputId']}`", f"- started: {doc['startedAt']}",
             f"- duration: {_ms(doc['durationMs'])}", ""]
    if data:
        lines += ["## Data written", "", "| name | version | kind |", "|---|---|---|"]
        lines += [f"| {_cell(d['name'])} | {d['version']} | {d['kind']} |" for d in data]
    else:
        lines.append("No data written.")
    if doc["error"]:
        lines += ["", "## Error", "", "```", doc["error"], "```"]
    return Report(markdown="\n".join(lines) + "\n", data=doc)


workflow_summary = ReportType("workflow-summary", scope="workflow",
                              description="A workflow run: each step's outcome and duration, the data "
                                          "written, the failures")


@workflow_summary.render
def _workflow_summary(ctx: ReportContext) -> Report:
    run = ctx.run
    steps = []
    for job in run.get("jobs", []):
        for s in job.get("steps", []):
            steps.append({"job": job.get("name"), "step": s.get("name"), "status": s.get("status"),
                          "durationMs": s.get("durationMs"), "model": s.get("model"), "method": s.get("method"),
                          "data": [{"name": d["name"], "version": d["version"], "kind": d["kind"]}
                                   for d in s.get("dataArtifacts", [])],
                          "error": s.get("error")})
    failures = [{"job": s["job"], "step": s["step"], "error": s["error"]} for s in steps if s["status"] == "failed"]
    counts: dict[str, int] = {}
    for s in steps:
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    doc = {"workflow": run.get("workflowName"), "runId": run.get("id"), "status": run.get("status"),
           "startedAt": run.get("startedAt"), "durationMs": run.get("durationMs"),
           "steps": steps, "stepCounts": dict(sorted(counts.items())),
           "dataWritten": sum(len(s["data"]) for s in steps), "failures": failures}
    if run.get("failureReason"):
        doc["failureReason"] = run["failureReason"]
    lines = [f"# Workflow {doc['workflow']}: {doc['status']}", "",
             f"- run: `{doc['runId']}`", f"- started: {doc['startedAt']}",
             f"- duration: {_ms(doc['durationMs'])}",
             "- steps: " + (", ".join(f"{n} {k}" for k, n in doc["stepCounts"].items()) or "none"),
             f"- data versions written: {doc['dataWritten']}", "",
             "## Steps", "", "| job | step | status | duration | data written |", "|---|---|---|---|---|"]
    for s in steps:
        written = ", ".join(f"{d['name']} v{d['version']}" for d in s["data"])
        lines.append(f"| {_cell(s['job'])} | {_cell(s['step'])} | {s['status']} | {_ms(s['durationMs'])} "
                     f"| {_cell(written)} |")
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- {f['job']}/{f['step']}: {_cell(f['error'])}" for f in failures]
    elif doc.get("failureReason"):
        lines += ["", "## Failure", "", doc["failureReason"]]
    return Report(markdown="\n".join(lines) + "\n", data=doc)
