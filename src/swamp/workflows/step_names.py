"""The names a run record shows for its steps, mapped back to the workflow's
declared steps: a forEach step is declared once (``deploy-${{ self.region }}``)
and recorded once per item, under the name its item renders (``deploy-eu``).
A command that takes a step (``resume --from``) accepts either."""

from __future__ import annotations

from swamp.workflows.records import WorkflowRun


def declared_step(run: WorkflowRun, name: str) -> str:
    """``name`` as the workflow declares it: a forEach item's recorded name
    (``deploy-eu`` or ``JOB/deploy-eu``) becomes its declared step's
    (``JOB/deploy-${{ self.region }}``); any other name comes back as given."""
    for job in run.jobs:
        for step in job.steps:
            if step.forEachOf and name in (step.name, f"{job.name}/{step.name}"):
                return f"{job.name}/{step.forEachOf}"
    return name
