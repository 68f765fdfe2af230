"""A warning of `workflow validate` for an approval or a signal that holds
nothing back: steps of a job run at once unless they declare ``dependsOn``,
so a gate that no step depends on (and whose job no job depends on) lets
everything else run without waiting for it."""

from __future__ import annotations

from swamp.workflows.schema import Workflow

GATES = {"manual_approval": "an approval", "wait_for_signal": "a signal wait"}


def ungated_warnings(wf: Workflow) -> list[str]:
    """One warning per approval or signal step that gates nothing."""
    if sum(len(j.steps) for j in wf.jobs) < 2:
        return []  # nothing else to hold back
    depended_jobs = {d.job for j in wf.jobs for d in j.dependsOn}
    out = []
    for i, job in enumerate(wf.jobs):
        if job.name in depended_jobs:
            continue  # the jobs after it wait for it
        depended_steps = {d.step for s in job.steps for d in s.dependsOn}
        for k, step in enumerate(job.steps):
            what = GATES.get(step.task.type)
            if what is None or step.name in depended_steps:
                continue
            others = [s.name for s in job.steps if s.name != step.name]
            names = ", ".join(repr(n) for n in others)
            runs = (f"{'step' if len(others) == 1 else 'steps'} {names} of job {job.name!r} "
                    f"{'runs' if len(others) == 1 else 'run'} without waiting for it"
                    if others else f"no job depends on job {job.name!r}")
            out.append(f"jobs[{i}].steps[{k}] ({step.name}): {what} that gates nothing: {runs} (steps of a job "
                       f"run at once unless they declare dependsOn); add dependsOn: [{{step: {step.name}}}] to "
                       "the steps it should hold back")
    return out
