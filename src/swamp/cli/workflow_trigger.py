"""``swamp workflow trigger set|get|remove``: a workflow's schedule, run by
``swamp serve`` (docs/serve.md#schedules). Registered on the ``workflow``
group at the end of cli/workflow.py."""

from __future__ import annotations

import json

import click

from swamp.cli.inputs import input_options
from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit


def _text(t: dict) -> str:
    if not t["schedule"]:
        off = " (its file's trigger is turned off)" if t["source"] == "set" else ""
        return f"workflow {t['workflow']}: no schedule{off}"
    inputs = f" with inputs {json.dumps(t['inputs'], sort_keys=True)}" if t["inputs"] else ""
    where = "set with 'swamp workflow trigger set'" if t["source"] == "set" else "from its file"
    return f"workflow {t['workflow']}: runs at {t['schedule']!r} (UTC){inputs}, {where}"


@click.group("trigger")
def trigger():
    """A workflow's schedule (cron, UTC), run by swamp serve.

    Example: swamp workflow trigger get nightly"""


@trigger.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """Every workflow's schedule in force: its cron (UTC), when it fires next,
    where it comes from, and the last run it started. (A server's own
    --schedule options are listed by that server when it starts.)

    Example: swamp workflow trigger list"""
    from swamp.app.trigger_list import trigger_rows
    from swamp.cli.output import say, table

    rows = trigger_rows(state.repo())

    def human():
        if not rows:
            say("no workflow has a schedule (set one with 'swamp workflow trigger set NAME --schedule CRON')")
            return
        table([{"workflow": r["workflow"], "schedule": r["schedule"], "next (UTC)": r["nextFire"] or "-",
                "from": r["source"],
                "last run": f"{r['lastRun']['status']} {r['lastRun']['startedAt']} {r['lastRun']['id'][:8]}"
                if r["lastRun"] else "-"} for r in rows],
              ["workflow", "schedule", "next (UTC)", "from", "last run"])

    emit(state, rows, human)


@trigger.command("get")
@click.argument("name")
@global_options
@click.pass_obj
def get(state: CliState, name):
    """Show the schedule in force for workflow NAME, and where it comes from.

    Example: swamp workflow trigger get nightly"""
    from swamp.app import schedules

    result = schedules.get_trigger(state.repo(), name)
    emit(state, result, _text(result))


@trigger.command("set")
@click.argument("name")
@click.option("--schedule", "cron", required=True, metavar="CRON",
              help="Five fields (minute hour day month weekday) or six (seconds first), in UTC.")
@input_options
@global_options
@click.pass_obj
def set_(state: CliState, name, cron, input_, input_file, stdin_input):
    """Run workflow NAME at each tick of CRON on every swamp serve of this
    datastore, with these inputs. It wins over the trigger in the workflow's
    file, and reaches running servers within seconds.

    Example: swamp workflow trigger set nightly --schedule '0 3 * * *' --input env=prod"""
    from swamp.app import schedules
    from swamp.cli.inputs import collect_inputs

    inputs = collect_inputs(input_, input_file, stdin_input)
    result = schedules.set_trigger(state.repo(), name, cron, inputs)
    emit(state, result, _text(result))


@trigger.command("remove")
@click.argument("name")
@global_options
@click.pass_obj
def remove(state: CliState, name):
    """Stop running workflow NAME on a schedule: the schedule set is
    dropped, and one in the workflow's file is turned off (until 'trigger set').

    Example: swamp workflow trigger remove nightly"""
    from swamp.app import schedules

    result = schedules.remove_trigger(state.repo(), name)
    emit(state, result, _text(result))
