"""A run named as the CLI names it (upstream's RUN_ID_OR_WORKFLOW): its id
(or a unique start of it), or a workflow's name for that workflow's newest
run, so `workflow history get deploy --server URL` reads what the local
command reads.

The name form is taken only for a caller who may read that workflow;
for anyone else the text is a run id and nothing more, so a 403 against
a 404 never tells them whether a workflow of that name exists."""

from __future__ import annotations

from swamp.serve.errors import HttpError


def find(call, ref: str):
    from swamp.app import workflows

    try:
        call.authorize("read", f"workflow:{ref}")
        by_name = True
    except HttpError:
        by_name = False
    run = workflows.run_by_id(call.repo, ref, or_workflow=by_name)
    call.authorize("read", f"workflow:{run.workflowName}")
    return run
