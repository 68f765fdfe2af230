"""`swamp run ...`: method and workflow runs together (history, gc, doctor)."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, human_size, say, table

KINDS = ("method", "workflow")
#: workflows.records.RUN_STATUSES, spelled here so that the help of a --status filter loads no domain
#: code (tests/unit/test_run_statuses.py holds the two equal); every CLI --status filter uses it
STATUSES = ("pending", "running", "suspended", "succeeded", "failed", "cancelled", "interrupted")


@click.group("run")
def run():
    """Method and workflow runs together: history, gc, doctor.

    Example: swamp run history --status failed --since 1d"""


@run.command("history")
@click.option("--kind", type=click.Choice(KINDS), help="Only method runs, or only workflow runs.")
@click.option("--status", type=click.Choice(STATUSES), help="Only runs in this state.")
@click.option("--model", metavar="MODEL", help="Runs of this model (and workflow runs with a step on it).")
@click.option("--workflow", metavar="WORKFLOW", help="Runs of this workflow (and the method runs its steps made).")
@click.option("--since", metavar="WHEN", help="Started since: a duration back from now (12h, 7d) or an ISO time.")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True, help="At most this many (newest first).")
@global_options
@click.pass_obj
def history(state: CliState, kind, status, model, workflow, since, limit):
    """Method runs and workflow runs, newest first.

    Example: swamp run history --kind workflow --status failed --since 7d
    """
    from swamp.app.runs import history as run_history

    rows = run_history(state.repo(), kind=kind, status=status, model=model, workflow=workflow, since=since,
                       limit=limit)

    def human():
        if not rows:
            say("no runs")
            return
        shown = [{**r, "status": f"{r['status']} (holder gone)"} if r.get("holderGone") else r for r in rows]
        table(shown, ["startedAt", "kind", "name", "status", "durationMs", "id", "initiatedBy"],
              ["STARTED", "KIND", "NAME", "STATUS", "MS", "ID", "BY"])
        if any(r.get("holderGone") for r in rows):
            say("hint: a run whose holder is gone died mid-run; 'swamp run doctor' (or any swamp serve) "
                "records it interrupted, then 'swamp workflow resume NAME --run ID --from STEP' restarts it")

    emit(state, rows, human)


#: upstream's retention when neither --older-than nor --keep is given
DEFAULT_RETENTION = "30d"


@run.command("gc")
@click.option("--older-than", metavar="DURATION",
              help=f"Finished runs that ended longer ago than this (12h, 7d; default {DEFAULT_RETENTION}).")
@click.option("--keep", type=click.IntRange(0), metavar="N",
              help="Keep the newest N runs of each model method and of each workflow.")
@click.option("--kind", type=click.Choice(KINDS), help="Only method runs, or only workflow runs.")
@click.option("--dry-run", is_flag=True, help="Only report what would be deleted.")
@click.option("-y", "--yes", "-f", "--force", "yes", is_flag=True,
              help="Delete without asking (needed without a terminal when the default retention applies).")
@global_options
@click.pass_obj
def gc(state: CliState, older_than, keep, kind, dry_run, yes):
    """Delete old run records and their logs (never a workflow run that is
    pending, running or suspended; the data runs wrote stays). Without
    --older-than or --keep, runs that ended over 30 days ago.

    Example: swamp run gc --dry-run
    Example: swamp run gc --force
    Example: swamp run gc --older-than 7d --keep 10
    """
    from swamp.app.runs import collect

    if older_than is None and keep is None:
        older_than = DEFAULT_RETENTION
        if not dry_run:  # nothing was said about which runs: ask before deleting
            from swamp.cli.output import confirm

            confirm(state, yes, f"delete the runs that ended over {DEFAULT_RETENTION} ago "
                                "(the default --older-than)?")

    result = collect(state.repo(), older_than=older_than, keep=keep, kind=kind, dry_run=dry_run)

    def human():
        verb = "would delete" if dry_run else "deleted"
        for d in result["deleted"]:
            say(f"{verb} {d['kind']} run {d['id']}  {d['name']}  {d['status']}  {d['startedAt']}")
        say(f"{verb} {result['runs']} run(s): {result['files']} file(s), {human_size(result['bytes'])}")

    emit(state, result, human)


@run.command("doctor")
@click.option("--dry-run", is_flag=True, help="Only list the runs whose process is gone.")
@click.option("--wait", "wait_s", type=click.FloatRange(0), default=0, show_default=True, metavar="SECONDS",
              help="Watch leases held on other machines this long (their ttl, 30 s, proves a holder gone).")
@global_options
@click.pass_obj
def doctor(state: CliState, dry_run, wait_s):
    """Mark as interrupted the workflow runs recorded running whose process
    is gone (recorded failed, with the reason).

    Example: swamp run doctor --dry-run
    """
    from swamp.app.runs import doctor as run_doctor

    result = run_doctor(state.repo(), dry_run=dry_run, wait_s=wait_s)

    def human():
        if not result["orphaned"]:
            say("no run is left running by a process that is gone")
            return
        marked = {m["runId"] for m in result["marked"]}
        for o in result["orphaned"]:
            done = "marked" if o["runId"] in marked else ("would mark" if dry_run else "left")
            say(f"{done} {o['workflowName']} run {o['runId']} ({o['status']}): {o['reason']}")

    emit(state, result, human)
