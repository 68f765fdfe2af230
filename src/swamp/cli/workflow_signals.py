"""``swamp workflow signal`` and ``swamp workflow signals``: send a message
to a step waiting for one, list the waits (docs/signals.md). Registered on
the ``workflow`` group at the end of cli/workflow.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table
from swamp.cli.remote_handlers import runs_on_server
from swamp.errors import UsageError, ValidationError


def _parse_data(text: str) -> Any:
    """``--data``: JSON text, or @FILE holding JSON."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text()
        except OSError as e:
            # Like an unreadable --input @file: the command line was fine, the file it names was not.
            raise ValidationError(f"--data {text}: cannot read {path}: {e.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise UsageError(f"--data is not JSON: {e}",
                         hint="quote it for the shell, e.g. --data '{\"version\": \"1.2\"}', or --data @message.json")


def _settled_text(result: dict, name: str) -> str:
    return (f"signalled {result['job']}/{result['step']} of run {result['runId']}; it continues with "
            f"'swamp workflow resume {name}' (a server resumes it by itself)")


@click.command("signal")
@click.argument("name")
@click.argument("step")
@click.option("--data", "data", required=True, metavar="JSON|@FILE",
              help="The message: JSON text, or @FILE holding JSON.")
@click.option("--run", "run_id", metavar="ID",
              help="The run (default: the newest suspended or running one waiting at STEP).")
@global_options
@click.pass_obj
def signal(state: CliState, name, step, data, run_id):
    """Send a message to STEP (or JOB/STEP), a wait_for_signal step of a
    run of NAME. The first message settles the wait; a later one is
    refused, naming who settled it. A message that does not match the
    step's schema is refused and nothing is recorded.

    Example: swamp workflow signal deploy release --data '{"version": "1.4.2"}'"""
    from swamp.app import signals as app_signals
    message = _parse_data(data)
    result = app_signals.signal(state.repo(), name, step, message, run_id)
    emit(state, result, _settled_text(result, name))


@click.command("signals")
@click.argument("name", required=False)
@global_options
@click.pass_obj
def signals(state: CliState, name):
    """The steps of suspended or running runs that wait for a signal (of
    NAME, or of every workflow), and whether each is still waiting.

    Example: swamp workflow signals"""
    from swamp.app import signals as app_signals

    rows = app_signals.waiting(state.repo(), name)
    emit(state, rows, lambda: table(rows, ["workflowName", "runId", "job", "step", "state", "prompt", "deadline"]))


# ------------------------------------------------------------- --server
def _q(value: str) -> str:
    import urllib.parse

    return urllib.parse.quote(value, safe="")


@runs_on_server("workflow signal", {"name", "step", "data", "run_id"})
def remote_signal(client, state, p: dict) -> None:
    """``swamp workflow signal --server URL``."""
    from swamp.errors import UnpublishedError

    body = {"step": p["step"], "message": _parse_data(p["data"])}
    if p.get("run_id"):
        body["runId"] = p["run_id"]
    status, result = client.call("POST", f"/workflows/{_q(p['name'])}/signal", body)
    if status == 202:
        raise UnpublishedError(result["error"], hint=result.get("hint"), value=result.get("value"))
    emit(state, result, lambda: say(_settled_text(result, p["name"]).replace(
        "it continues with 'swamp workflow resume " + p["name"] + "' (a server resumes it by itself)",
        "the server resumes it")))


@runs_on_server("workflow signals", {"name"})
def remote_signals(client, state, p: dict) -> None:
    """``swamp workflow signals --server URL``."""
    _, rows = client.call("GET", "/signals", query={"workflow": p.get("name")})
    emit(state, rows, lambda: table(rows, ["workflowName", "runId", "job", "step", "state", "prompt", "deadline"]))

