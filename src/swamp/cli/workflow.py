from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from swamp.cli.inputs import collect_batch, collect_inputs, input_options
from swamp.cli.options import CliState, global_options
from swamp.cli.groups import CommandWithSubcommands, DefaultCommandGroup
from swamp.cli.run import STATUSES as RUN_STATUSES
from swamp.cli.output import confirm, emit, emit_validation, open_in_editor, say, table
from swamp.cli.report import run_options, say_reports, selections
from swamp.cli.worker_links import link_options

if TYPE_CHECKING:
    from swamp.app.repository import Repo


@click.group()
def workflow():
    """Chain methods in jobs and steps.

    Example: swamp workflow run deploy --input env=prod"""


@workflow.command("create")
@click.argument("name")
@global_options
@click.pass_obj
def create(state: CliState, name):
    """Write a skeleton workflow NAME to workflows/workflow-NAME.yaml.

    Example: swamp workflow create deploy"""
    from swamp.app.managed_config import create_workflow

    result = create_workflow(state.repo(), name)
    emit(state, result, f"Created workflow {result['name']} at {result['path']}")


@workflow.command("get")
@click.argument("name")
@global_options
@click.pass_obj
def get(state: CliState, name):
    """Show a workflow (by name or id).

    Example: swamp workflow get deploy"""
    from swamp.util import yamlio
    from swamp.app import workflow_files

    result = workflow_files.get(state.repo(), name)
    emit(state, result, lambda: say(yamlio.dumps(result).rstrip()))


@workflow.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def search(state: CliState, query):
    """List workflows whose name or description contains QUERY.

    Example: swamp workflow search deploy"""
    from swamp.app import workflow_files

    rows = workflow_files.search(state.repo(), query)
    emit(state, rows, lambda: table(rows, ["name", "jobs", "description", "path"]))


workflow.add_command(search, "list")  # upstream's alias


@workflow.command("validate")
@click.argument("name", required=False)
@global_options
@click.pass_obj
def validate(state: CliState, name):
    """Check workflows: schema, dependencies, expressions, and the models,
    methods and workflows they name. Exits 1 when any is invalid.

    Example: swamp workflow validate deploy"""
    from swamp.app import workflow_files

    result = workflow_files.validate(state.repo(), name)
    emit_validation(state, result, "workflows")


@workflow.command("evaluate")
@click.argument("name")
@input_options
@global_options
@click.pass_obj
def evaluate(state: CliState, name, input_, input_file, stdin_input):
    """Show NAME with its expressions resolved where they can be now, and
    forEach steps expanded.

    Example: swamp workflow evaluate deploy --input env=prod"""
    from swamp.util import yamlio
    from swamp.app import workflows

    result = workflows.evaluate(state.repo(), name, collect_inputs(input_, input_file, stdin_input))
    emit(state, result, lambda: say(yamlio.dumps(result).rstrip()))


def _observer(state: CliState, activity):
    """Step progress on a terminal (stderr), never in --json or -q: a line
    per step as it changes, and the status line naming what runs now."""
    from swamp.vault.redact import redact_text

    if state.json or state.quiet:
        return None

    def waiting(run, job, step, line):  # a placed step waiting for a fitting worker: why nothing moves
        activity.say(redact_text(f"  … {job.name}/{step.name} {line}"))

    if not sys.stderr.isatty():  # no step lines, but that one
        def quiet(run, job, step):
            pass

        quiet.step_waiting = waiting
        return quiet

    marks = {"running": "…", "succeeded": "✓", "failed": "✗", "skipped": "-", "waiting_approval": "?"}
    running: dict[str, None] = {}

    def show(run, job, step):
        where = f"{job.name}/{step.name}"
        if step.status == "running":
            running[where] = None
        else:
            running.pop(where, None)
        activity.doing(f"workflow {run.workflowName}: " + (", ".join(running) or "…"))
        extra = f" ({step.skipReason})" if step.skipReason else (f": {step.error}" if step.error else "")
        if step.status == "running" and step.attempts and step.attempts[-1].number == step.attempt:
            last = step.attempts[-1]  # the attempt in flight just failed: another follows (workflows/retries.py)
            activity.say(redact_text(f"  ↻ {where} attempt {last.number}/{step.maxAttempts} failed: {last.error}; "
                                     "trying again"))
            return
        activity.say(redact_text(f"  {marks.get(step.status, ' ')} {where} {_step_status(step)}{extra}"))
        if step.status == "failed" and step.stderrTail:
            activity.say(redact_text(f"      stderr: {step.stderrTail}"))

    show.step_log = lambda run, job, step, line: activity.logged(line)  # a placed step's lines, live
    show.step_waiting = waiting
    return show


def _step_status(s) -> str:
    """"succeeded (attempt 3/3)" for a step tried more than once."""
    return f"{s.status} ({s.attempt_note})" if s.attempt_note else s.status


def _finish(state: CliState, repo: Repo, result, junit: str | None, *, under: dict | None = None,
            failed_ok: bool = False) -> None:
    """Print a run (--json: its record; with ``under``, that document with
    the record as its "run") and exit 1 when it failed, unless ``failed_ok``."""
    from swamp.app.workflow_files import run_json, run_junit

    run = result.run
    if junit:
        from swamp.util.atomic import atomic_write

        atomic_write(junit, run_junit(run))
    data = run_json(repo, run)
    if result.shared:
        data["sync"] = result.sync.to_json()  # every session of the run, added up
    if result.unpublished is not None:
        data["published"] = False
    if result.reports:
        data["reports"] = [o.to_json() for o in result.reports]

    from swamp.cli.run_record import say_stderr_tails
    from swamp.cli.run_resumes import resumed_note

    def human():
        say(f"workflow {run.workflowName}: run {run.id} {run.status}"
            + (f" in {run.durationMs} ms" if run.durationMs is not None else "")
            + (f" (re-runs run {run.rerunOf})" if run.rerunOf else "") + resumed_note(data))
        rows = [{"job": j.name, "step": s.name, "status": _step_status(s),
                 "detail": s.skipReason or s.error or (s.approval.prompt if s.approval and
                                                       s.status == "waiting_approval" else None)
                 or (f"kept from run {s.reusedFrom}" if s.reusedFrom else None)}
                for j, s in run.steps()]
        table(rows, ["job", "step", "status", "detail"])
        say_stderr_tails((j["name"], s) for j in data.get("jobs", []) for s in j.get("steps", []))
        say_reports(result.reports)
        if run.status == "suspended":
            for j, s in run.steps():
                if s.status == "waiting_signal":
                    say(f"waiting for a signal: {j.name}/{s.name}" + (f" ({s.signal.prompt})" if s.signal.prompt else "")
                        + f": swamp workflow signal {run.workflowName} {j.name}/{s.name} --data JSON --run {run.id}")
            for w in data.get("approvalRequired", []):
                say(f"waiting for approval: {w['step']}"
                    f" (swamp workflow approve {run.workflowName} {w['step']} --run {run.id}, or reject)")

    emit(state, data if under is None else {**under, "run": data}, human)
    if result.unpublished is not None:
        raise result.unpublished  # done here, not published: the error on stderr, exit 1
    if run.status in ("failed", "cancelled", "interrupted") and not failed_ok:
        sys.exit(1)


_junit = click.option("--junit", type=click.Path(dir_okay=False), metavar="FILE",
                      help="Also write a JUnit XML report to FILE.")


@workflow.command("run", cls=CommandWithSubcommands)
@click.argument("name", required=False)
@click.option("--from-failed", "from_failed", metavar="RUN_ID",
              help="Re-run failed run RUN_ID from its failure, as a new run: only the steps that failed or did "
                   "not run run; those that succeeded keep their outcome and data (NAME may be left out).")
@input_options
@_junit
@click.option("--fail-on", type=click.Choice(["low", "medium", "high"]), default="low", show_default=True,
              help="The lowest severity of a failed assert that fails the run.")
@click.option("--scheduler", envvar="SWAMP_SCHEDULER", metavar="ADDRESS",
              help="Dispatch placed steps to the workers of this Dask scheduler (tls://HOST:8786; "
                   "swamp docs workers). Default: $SWAMP_SCHEDULER.")
@click.option("--remote-only", is_flag=True, help="Fail a model_method step without placement "
              "instead of running it on this machine.")
@click.option("--queue-timeout", "queue_timeout", type=float, metavar="SECONDS",
              help="The longest a placed step waits for a fitting worker (a step's own shorter "
                   "queueTimeout wins); a line of progress shows while it waits.")
@click.option("--detach", is_flag=True, help="Start the run in the background (with --server: on the server) "
              "and print its id at once; follow it with 'swamp workflow history get ID --follow'.")
@link_options("--insecure-scheduler")
@run_options
@global_options
@click.pass_obj
def run(state: CliState, name, input_, input_file, stdin_input, junit, fail_on, scheduler=None, remote_only=False,
        link=None, from_failed=None, detach=False, queue_timeout=None, **options):
    """Run workflow NAME and print its run record. Exits 1 when the run fails.

    With --stdin holding NDJSON (one JSON object a line), runs it once per
    line, in order, and prints a list of run records.

    'swamp workflow run search [QUERY]' searches past runs instead (a workflow
    named "search" runs when an option comes first: 'swamp workflow run
    --fail-on low search').

    Example: swamp workflow run deploy --input env=prod"""
    from swamp.app import workflows
    from swamp.cli.activity import activity_for
    from swamp.errors import UsageError

    reports, checks = selections(options)
    batch = collect_batch(input_, input_file, stdin_input)
    repo = state.repo()
    if len(batch) > 1 and junit:
        raise UsageError("--junit writes one run's report; a batch from --stdin has several")
    if from_failed:
        if len(batch) > 1:
            raise UsageError("--from-failed re-runs one run; a batch from --stdin has several")
        name = name or workflows.run_by_id(repo, from_failed).workflowName
    elif not name:
        raise UsageError("missing the workflow's NAME", hint="swamp workflow run NAME (see swamp workflow search)")
    if detach:
        if from_failed:
            raise UsageError("--detach and --from-failed do not go together yet",
                             hint="re-run from failure without --detach, then follow the run it prints")
        _detach(state, repo, name, batch, fail_on, {
            "--junit": junit, "--scheduler": scheduler, "--remote-only": remote_only, "--queue-timeout": queue_timeout,
            "--report/--skip-report(s)": reports.requested or reports.skip_all or reports.skip,
            "--skip-check(s)": checks[0] or checks[1]})
        return
    from swamp.app import placed_steps

    with placed_steps.opened(scheduler, link=link, remote_only=remote_only,
                             queue_timeout=queue_timeout) as placed:  # where its placed steps go
        if len(batch) > 1:
            _run_batch(state, repo, name, batch, fail_on, reports, checks, placed)
            return
        with activity_for(state, f"workflow {name}") as activity:
            result = workflows.run(repo, name, batch[0], fail_on=fail_on, observer=_observer(state, activity),
                                   reports=reports, checks=checks, from_failed=from_failed, placed=placed)
    _finish(state, repo, result, junit)


def _detach(state: CliState, repo: Repo, name: str, batch: list[dict], fail_on: str, refused: dict) -> None:
    """--detach: one run, started in a background process (cli/detached_run.py)."""
    from swamp.cli import detached_run
    from swamp.errors import UsageError

    given = sorted(k for k, v in refused.items() if v)
    if len(batch) > 1 or given:
        what = "a batch from --stdin" if len(batch) > 1 else ", ".join(given)
        raise UsageError(f"--detach starts one run with its inputs and --fail-on; not with {what}",
                         hint=f"run it in the foreground: swamp workflow run {name}")
    doc = detached_run.start(state, repo, name, batch[0], fail_on)
    emit(state, doc, f"started run {doc['runId']} of {name} in the background; follow it: {doc['follow']}")


def _run_batch(state: CliState, repo: Repo, name: str, batch: list[dict], fail_on: str, reports=None,
               checks=None, placed=None) -> None:
    from swamp.app import workflows
    from swamp.cli.activity import activity_for
    from swamp.app.workflow_files import run_json

    results = []
    for inputs in batch:
        with activity_for(state, f"workflow {name}") as activity:
            results.append(workflows.run(repo, name, inputs, fail_on=fail_on,
                                         observer=_observer(state, activity), reports=reports, checks=checks,
                                         placed=placed))
    docs = [run_json(repo, r.run) for r in results]

    def human():
        for r in results:
            say(f"workflow {r.run.workflowName}: run {r.run.id} {r.run.status}")

    emit(state, docs, human)
    unpublished = next((r.unpublished for r in results if r.unpublished is not None), None)
    if unpublished is not None:
        raise unpublished
    if any(r.run.status in ("failed", "cancelled", "interrupted") for r in results):
        sys.exit(1)


@workflow.command("resume")
@click.argument("name")
@click.option("--run", "run_id", metavar="ID",
              help="The run to resume (default: the newest suspended one; with --from, the newest failed one).")
@click.option("--from", "from_step", metavar="STEP",
              help="Restart a failed or cancelled run from STEP (or JOB/STEP): it and what depends on it run "
                   "again, the rest keeps its outcome.")
@input_options
@_junit
@run_options
@global_options
@click.pass_obj
def resume(state: CliState, name, run_id, from_step, input_, input_file, stdin_input, junit, **options):
    """Continue a suspended run; steps that finished are not run again.
    --input values merge over the inputs the run was started with.

    Example: swamp workflow resume deploy --from build"""
    from swamp.app import workflows
    from swamp.cli.activity import activity_for

    reports, checks = selections(options)
    inputs = collect_inputs(input_, input_file, stdin_input)
    repo = state.repo()
    with activity_for(state, f"workflow {name}") as activity:
        result = workflows.resume(repo, name, run_id, inputs, observer=_observer(state, activity),
                                  from_step=from_step, reports=reports, checks=checks)
    _finish(state, repo, result, junit)


def _decision(decision: str):
    verb = "approve" if decision == "approved" else "reject"

    @workflow.command(verb)
    @click.argument("name")
    @click.argument("step")
    @click.option("--run", "run_id", metavar="RUN_ID",
                  help="The run (needed when several runs wait at STEP; 'swamp workflow approvals' lists them).")
    @click.option("--reason", help="Why; kept in the run record.")
    @click.option("--no-resume", is_flag=True,
                  help="Only record the decision; the run stays suspended until 'swamp workflow resume'.")
    @global_options
    @click.pass_obj
    def command(state: CliState, name, step, run_id, reason, no_resume):
        from swamp.app import workflows
        from swamp.app.approvals import continuable, decision_line

        repo = state.repo()
        result = workflows.decide(repo, name, step, decision, run_id, reason)
        if no_resume or not continuable(repo, name, result["runId"]):
            waits = "" if no_resume else "; the run still waits for another decision or a signal"
            emit(state, {**result, "resumed": False},
                 f"{decision_line(result)}{waits}; continue with: "
                 f"swamp workflow resume {name} --run {result['runId']}")
            return
        _continue_here(state, repo, name, result)

    command.__doc__ = (f"{verb.capitalize()} STEP of a suspended run of NAME (STEP or JOB/STEP), then continue the "
                       f"run here once nothing else in it waits (as 'swamp workflow resume' would; with --server, "
                       f"on the server). Several runs waiting at STEP: say which with --run. Exits 1 when the run "
                       f"it continues fails{'' if decision == 'approved' else ' for another reason than this one'}.\n\n"
                       f"Example: swamp workflow {verb} deploy release --run RUN_ID --reason \"checked the plan\"")
    command.help = command.__doc__
    return command


def _continue_here(state: CliState, repo: Repo, name: str, decided: dict) -> None:
    """Continue the run a decision settled, in this process, and print it as
    'workflow resume' does (--json: the decision, the run record as its "run")."""
    from swamp.app import workflows
    from swamp.app.approvals import decision_line
    from swamp.cli.activity import activity_for

    if not (state.json or state.quiet):
        say(decision_line(decided) + "; continuing the run here")
    with activity_for(state, f"workflow {name}") as activity:
        result = workflows.resume(repo, name, decided["runId"], {}, observer=_observer(state, activity))
    rejected_here = decided["decision"] == "rejected" and result.run.failedStep in (
        decided["step"], f"{decided['job']}/{decided['step']}")
    _finish(state, repo, result, None, under={**decided, "resumed": True}, failed_ok=rejected_here)


approve = _decision("approved")
reject = _decision("rejected")


@run.subcommand("search")
@click.argument("query", required=False)
@click.option("--workflow", "workflow_name", help="Only runs of this workflow.")
@click.option("--status", type=click.Choice(RUN_STATUSES),
              help="Only runs in this status.")
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many runs.")
@global_options
@click.pass_obj
def run_search(state: CliState, query, workflow_name, status, limit):
    """Past runs of every workflow, newest first; QUERY keeps those whose id
    starts with it or whose workflow name contains it.

    Example: swamp workflow run search deploy --status failed"""
    from swamp.app import workflows

    rows = workflows.search_runs(state.repo(), workflow=workflow_name, status=status, limit=limit, query=query)
    emit(state, rows, lambda: table(rows, ["id", "workflowName", "status", "startedAt", "durationMs"]))


@workflow.command("approvals")
@click.argument("name", required=False)
@global_options
@click.pass_obj
def approvals(state: CliState, name):
    """What suspended runs wait for (of NAME, or of every workflow).

    Example: swamp workflow approvals"""
    from swamp.app import workflows

    rows = workflows.approvals(state.repo(), name)
    emit(state, rows, lambda: table(rows, ["workflowName", "runId", "job", "step", "prompt", "requestedAt"]))


@workflow.command("delete")
@click.argument("name")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--force", is_flag=True, help="Even while runs of it are running or waiting.")
@global_options
@click.pass_obj
def delete(state: CliState, name, yes, force):
    """Delete workflow NAME and its run records (refused while runs of it
    are running or waiting, unless --force).

    Example: swamp workflow delete deploy -y"""
    from swamp.app import workflows

    repo = state.repo()
    confirm(state, yes, f"Delete workflow {name} and its runs?")
    result = workflows.delete(repo, name, force=force)
    emit(state, result, f"Deleted workflow {result['name']} ({result['deletedRuns']} run(s))")


@workflow.command("edit")
@click.argument("name")
@global_options
@click.pass_obj
def edit(state: CliState, name):
    """Open NAME's file in $EDITOR, then check it.

    Example: EDITOR=vi swamp workflow edit deploy"""
    from swamp.app import workflow_files

    repo = state.repo()
    path = repo.root / workflow_files.get(repo, name)["path"]
    open_in_editor(state, path, "workflow", name, managed=repo.managed_config)
    from swamp.app.managed_config import publish_edit

    result = workflow_files.validate(repo, name)
    if result["valid"]:
        publish_edit(repo, "workflow", name, path)  # managed config: publish it (only once it is valid)
    emit_validation(state, result, "workflows")


@workflow.group("schema", cls=DefaultCommandGroup, default="get", invoke_without_command=True)
@click.pass_context
def schema(ctx):
    """The workflow file's schema ('schema' alone, or with --json, is 'schema get').

    Example: swamp workflow schema get"""
    if ctx.invoked_subcommand is None:
        ctx.invoke(schema_get)


@schema.command("get")
@global_options
@click.pass_obj
def schema_get(state: CliState):
    """Print the JSON Schema of a workflow file.

    Example: swamp workflow schema get > workflow.schema.json"""
    from swamp.app.workflow_files import file_schema
    from swamp.util import yamlio

    doc = file_schema()
    emit(state, doc, lambda: say(yamlio.dumps(doc).rstrip()))


@workflow.command("logs")
@click.argument("name")
@click.option("--run", "run_id", metavar="ID", help="The run (default: the newest).")
@global_options
@click.pass_obj
def logs(state: CliState, name, run_id):
    """Print a run's log.

    Example: swamp workflow logs deploy --run 3f2a9c1e"""
    from swamp.app import workflows

    result = workflows.logs(state.repo(), name, run_id)
    emit(state, result, lambda: click.echo(result["log"], nl=False))


@workflow.command("cancel")
@click.argument("name")
@click.option("--run", "run_id", metavar="ID", help="The run (default: the newest unfinished one).")
@global_options
@click.pass_obj
def cancel(state: CliState, name, run_id):
    """Cancel a suspended run, or ask a running one to stop.

    Example: swamp workflow cancel deploy"""
    from swamp.app import workflows

    result = workflows.cancel(state.repo(), name, run_id)
    emit(state, result, f"run {result['id']}: " + ("cancel requested" if result["cancelRequested"]
                                                  else result["status"]))


# workflow history list|search|get|logs
from swamp.cli.workflow_history import history  # noqa: E402

workflow.add_command(history)

# workflow signal / signals (docs/signals.md)
from swamp.cli.workflow_signals import signal as _signal, signals as _signals  # noqa: E402

workflow.add_command(_signal)
workflow.add_command(_signals)

# workflow trigger set|get|remove (docs/serve.md#schedules)
from swamp.cli.workflow_trigger import trigger as _trigger  # noqa: E402

workflow.add_command(_trigger)

# upstream's other name (cli/aliases.py)
from swamp.cli.aliases import hidden_alias  # noqa: E402

hidden_alias(run, run_search, "list")
