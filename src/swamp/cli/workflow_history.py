"""``swamp workflow history``: a workflow's runs (``history NAME``, the
default ``list``), every workflow's (``search``), and one run's record or
log by its id (``get``, ``logs``). Registered on the ``workflow`` group at
the end of cli/workflow.py."""

from __future__ import annotations

import click

from swamp.cli.groups import DefaultCommandGroup
from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, table
from swamp.cli.run import STATUSES as RUN_STATUSES


@click.group("history", cls=DefaultCommandGroup, default="list")
def history():
    """Runs: 'history NAME' lists NAME's runs; get, search and logs find runs by id.

    Example: swamp workflow history deploy"""


@history.command("list")
@click.argument("name")
@click.option("--limit", type=int, help="At most this many runs.")
@global_options
@click.pass_obj
def history_list(state: CliState, name, limit):
    """Runs of NAME, newest first.

    Example: swamp workflow history deploy --limit 5"""
    from swamp.app import workflows

    rows = workflows.history(state.repo(), name, limit)
    emit(state, rows, lambda: table(rows, ["id", "status", "startedAt", "durationMs", "steps", "failedSteps",
                                                "initiatedBy"]))


@history.command("search")
@click.option("--workflow", "workflow_name", help="Only runs of this workflow.")
@click.option("--status", type=click.Choice(RUN_STATUSES),
              help="Only runs in this status.")
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many runs.")
@global_options
@click.pass_obj
def history_search(state: CliState, workflow_name, status, limit):
    """Runs of every workflow, newest first.

    Example: swamp workflow history search --status failed"""
    from swamp.app import workflows

    rows = workflows.search_runs(state.repo(), workflow=workflow_name, status=status, limit=limit)
    emit(state, rows, lambda: table(rows, ["id", "workflowName", "status", "startedAt", "durationMs"]))


@history.command("get")
@click.argument("run_id", metavar="RUN_ID_OR_WORKFLOW")
@click.option("--follow", is_flag=True, help="Print each step as it changes until the run ends or suspends "
              "(--json: a JSON object a line, the run's record last); exits 1 when the run fails.")
@global_options
@click.pass_obj
def history_get(state: CliState, run_id, follow=False):
    """One run's record: by its id (or a unique start of it), or a
    workflow's name for that workflow's newest run.

    Example: swamp workflow history get deploy --follow"""
    from swamp.app import workflows
    from swamp.app.workflow_files import run_json

    from swamp.cli.run_record import say_run_record

    repo = state.repo()
    if follow:
        from swamp.cli.follow_run import follow as follow_run

        follow_run(state, lambda: run_json(repo, workflows.run_by_id(repo, run_id, or_workflow=True)))
        return
    doc = run_json(repo, workflows.run_by_id(repo, run_id, or_workflow=True))
    emit(state, doc, lambda: say_run_record(doc))


@history.command("logs")
@click.argument("run_id", metavar="RUN_ID_OR_WORKFLOW")
@global_options
@click.pass_obj
def history_logs(state: CliState, run_id):
    """One run's log: by its id (or a unique start of it), or a workflow's
    name for that workflow's newest run.

    Example: swamp workflow history logs deploy"""
    from swamp.app import workflows

    result = workflows.run_log_by_id(state.repo(), run_id, or_workflow=True)
    emit(state, result, lambda: click.echo(result["log"], nl=False))
