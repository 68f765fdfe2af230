"""A run as a JUnit XML report for CI systems: a testsuite per job, a
testcase per step. A failed step is a <failure>, a skipped one <skipped>,
and a step that never finished (waiting for approval, or not reached) is
<skipped> with its status as the message. A retried step lists its
attempts in <system-out>."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from swamp.vault.redact import redact_text
from swamp.workflows.records import StepRun, WorkflowRun, readable


def _seconds(ms: int | None) -> str:
    return f"{(ms or 0) / 1000:.3f}"


def junit_xml(run: WorkflowRun) -> str:
    suites = ET.Element("testsuites", name=run.workflowName)
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for job in run.jobs:
        suite = ET.SubElement(suites, "testsuite", name=f"{run.workflowName}.{job.name}")
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        for step in job.steps:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", name=step.name,
                                 classname=f"{run.workflowName}.{job.name}", time=_seconds(step.durationMs))
            kind = _case(case, step)
            if kind:
                counts[kind] += 1
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("errors", "0")
        suite.set("time", _seconds(sum(s.durationMs or 0 for s in job.steps)))
    for k, v in totals.items():
        suites.set(k, str(v))
    suites.set("errors", "0")
    suites.set("time", _seconds(run.durationMs))
    ET.indent(suites)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    return redact_text(readable(text))


def _case(case: ET.Element, step: StepRun) -> str | None:
    if len(step.attempts) > 1:  # a retried step: its attempts, as CI shows a flaky test's reruns
        ET.SubElement(case, "system-out").text = "\n".join(
            f"attempt {a.number}/{step.maxAttempts}: {a.status}" + (f": {a.error}" if a.error else "")
            for a in step.attempts)
    if step.status == "failed":
        el = ET.SubElement(case, "failure", message=step.error or "failed",
                           type="allowedFailure" if step.allowedFailure else "failure")
        el.text = (step.error or "") + (f"\nstderr: {step.stderrTail}" if step.stderrTail else "")
        return "failures"
    if step.status == "skipped":
        ET.SubElement(case, "skipped", message=f"{step.skipReason}: {step.detail or ''}".rstrip(": "))
        return "skipped"
    if step.status != "succeeded":
        ET.SubElement(case, "skipped", message=step.status)
        return "skipped"
    return None
