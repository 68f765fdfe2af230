"""`swamp report ...`: report types and the reports runs stored; and the
report and pre-flight check options of `model method run` and `workflow run`."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table
from swamp.cli.run_reports import say_reports, selections  # noqa: F401  (for model.py and workflow.py)


def run_options(fn):
    """--report, --skip-reports, --skip-report, --skip-checks, --skip-check."""
    options = [
        click.option("--report", "report_", multiple=True, metavar="NAME",
                     help="Also run this report after the run (swamp docs reports). Repeatable."),
        click.option("--skip-reports", is_flag=True, help="Run no report after the run."),
        click.option("--skip-report", multiple=True, metavar="NAME",
                     help="Do not run this report (one the definition or workflow file names). Repeatable."),
        click.option("--skip-checks", is_flag=True, help="Run no pre-flight check before the method(s)."),
        click.option("--skip-check", multiple=True, metavar="NAME",
                     help="Do not run this pre-flight check. Repeatable."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.group("report")
def report():
    """Reports: what runs after a method or workflow run, and what they stored.

    Example: swamp report list --workflow deploy"""


@report.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def search(state: CliState, query):
    """Report types (builtin, local and from extensions) matching QUERY.

    Example: swamp report search summary"""
    from swamp.app import reports

    rows = reports.search(state.repo(), query)
    emit(state, rows, lambda: table(rows, ["name", "scope", "source", "description"])
         if rows else say("no report types match"))


@report.command("describe")
@click.argument("name")
@global_options
@click.pass_obj
def describe(state: CliState, name):
    """What report type NAME writes, and when it runs.

    Example: swamp report describe workflow-summary"""
    from swamp.app import reports
    from swamp.util import yamlio

    doc = reports.describe(state.repo(), name)
    emit(state, doc, lambda: say(yamlio.dumps(doc).rstrip()))


def _owner_options(fn):
    fn = click.option("--workflow", metavar="WORKFLOW", help="Reports of this workflow's runs.")(fn)
    fn = click.option("--model", metavar="MODEL", help="Reports of this model's method runs.")(fn)
    return fn


@report.command("list")
@_owner_options
@click.option("--run", "run_id", metavar="RUN_ID", help="Only the reports of this run (an id or its prefix).")
@click.option("--report", "report_name", metavar="NAME", help="Only this report.")
@global_options
@click.pass_obj
def list_(state: CliState, model, workflow, run_id, report_name):
    """The reports stored for a model's or a workflow's runs (without
    --model or --workflow: for every one), newest first.

    Example: swamp report list --workflow deploy"""
    from swamp.app import reports

    rows = reports.list_reports(state.repo(), model=model, workflow=workflow, run=run_id, report=report_name)
    emit(state, rows, lambda: table(rows, ["owner", "report", "status", "runId", "runStatus", "version", "createdAt"])
         if rows else say("no reports stored"))


@report.command("get")
@click.argument("name")
@_owner_options
@click.option("--run", "run_id", metavar="RUN_ID", help="The report of this run (default: the latest).")
@click.option("--version", type=click.IntRange(1), help="This version of the report's data.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print only the markdown, even with --json.")
@global_options
@click.pass_obj
def get(state: CliState, name, model, workflow, run_id, version, as_markdown):
    """Report NAME of a model's or a workflow's run: its markdown (with
    --json, the whole document: markdown, JSON, status, run).

    Example: swamp report get workflow-summary --workflow deploy"""
    from swamp.app import reports

    doc = reports.get(state.repo(), name, model=model, workflow=workflow, run=run_id, version=version)
    if as_markdown:
        click.echo(doc.get("markdown", ""), nl=False)
        return

    def human():
        if doc.get("status") == "failed":
            say(f"report {name} failed for run {doc.get('runId')}: {doc.get('error')}")
            return
        click.echo(doc.get("markdown", ""), nl=False)

    emit(state, doc, human)


@report.group("type")
def report_type():
    """Report types (as upstream names them: the same as 'swamp report search').

    Example: swamp report type search summary"""


report_type.add_command(search, "search")

# upstream's other name (cli/aliases.py)
from swamp.cli.aliases import hidden_alias  # noqa: E402

hidden_alias(report_type, search, "list")
