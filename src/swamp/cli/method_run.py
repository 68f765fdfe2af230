"""The body of `swamp model method run`, without click: the click command
(swamp.cli.model) and the fast lane (swamp.cli.fast_lane) both call `run`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from swamp.cli.inputs import collect_batch, parse_pairs
from swamp.cli.output import emit, say, show_failure_log
from swamp.cli.run_reports import say_reports, selections
from swamp.cli.state import CliState
from swamp.errors import UsageError

if TYPE_CHECKING:
    from swamp.app.repository import Repo


def run(state: CliState, model_name: str, method_name: str, direct_name: str | None = None,
        input_: tuple[str, ...] = (), input_file: str | None = None, stdin_input: bool = False,
        tag: tuple[str, ...] = (), placement: tuple[str, ...] = (), scheduler: str | None = None, link=None,
        **options) -> None:
    """Run METHOD of MODEL (or a TYPE directly as NAME) and print its output
    record(s); exits 1 if a run fails. ``options``: run_options' report and
    check selections (absent: none asked for). The defaults are click's: the
    fast lane passes only what a command line gives."""
    from swamp.app.methods import run_batch, run_direct
    from swamp.cli.activity import activity_for

    reports, checks = selections(options)
    direct = "/" in model_name
    if direct and not direct_name:
        raise UsageError(f"{model_name} is a type: name the model to run it as",
                         hint=f"swamp model method run {model_name} {method_name} NAME")
    if not direct and direct_name:
        raise UsageError(f"NAME is only for running a type directly; {model_name!r} is a model",
                         hint=f"swamp model method run {model_name} {method_name}")
    from swamp.app import running

    batch = collect_batch(input_, input_file, stdin_input)
    repo = state.repo()
    with activity_for(state, f"{direct_name or model_name}.{method_name}") as activity, \
            running.marked(repo, direct_name or model_name, method_name):  # so 'model cancel' can stop it
        if placement and (reports != type(reports)() or any(checks)):
            raise UsageError("--placement runs the method on a worker: reports and check options are "
                             "not available with it yet", hint="run it without --placement")
        if placement:  # on a worker (swamp.workers)
            results = _placed_run(repo, model_name, method_name, direct, batch, placement, scheduler,
                                  parse_pairs(tag, "--tag"), activity.listener, link=link)
        elif direct:
            results = run_direct(repo, model_name, method_name, direct_name, batch,
                                 tags=parse_pairs(tag, "--tag"), on_log=activity.listener,
                                 reports=reports, checks=checks)
        else:
            results = run_batch(repo, model_name, method_name, batch, tags=parse_pairs(tag, "--tag"),
                                on_log=activity.listener, reports=reports, checks=checks)

    def human():
        for result in results:
            rec = result.record
            say(f"{rec.modelName}.{rec.methodName}: {rec.status} in {rec.durationMs} ms")
            for a in rec.dataArtifacts:
                say(f"  wrote {a['kind']} {a['name']} version {a['version']}")
            if rec.error:
                say(f"  error: {rec.error}")
            if rec.stderrTail:
                say(f"  stderr: {rec.stderrTail}")
            say_reports(result.reports)
            if result.failure_log is not None:
                show_failure_log(state, result.failure_log, f"swamp model output logs {rec.id}")

    docs = [r.to_json() for r in results]
    emit(state, docs[0] if len(batch) == 1 else docs, human)
    if results and results[0].unpublished is not None:
        raise results[0].unpublished  # done here, not published: the error on stderr, exit 1
    if any(r.record.status != "succeeded" for r in results):
        sys.exit(1)


def _placed_run(repo: Repo, model_name, method_name, direct, batch, placement, scheduler, tags, on_log=None, link=None):
    from swamp.app import placed_steps
    from swamp.app.remote_steps import Placement, run_method
    from swamp.app.worker_fleet import parse_labels

    labels = parse_labels(placement)
    if not scheduler:
        raise UsageError("--placement needs --scheduler (or $SWAMP_SCHEDULER)")
    if direct or len(batch) != 1:
        raise UsageError("--placement runs one method of a model: no type run directly, no --stdin batch")
    with placed_steps.opened(scheduler, link=link) as placed:
        return [run_method(repo, model_name, method_name, inputs=batch[0], placement=Placement(labels=labels),
                           dispatcher=placed.dispatcher, tags=tags, on_log=on_log)]
