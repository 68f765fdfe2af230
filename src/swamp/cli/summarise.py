"""`swamp summarise` (and `summarize`): what the repository did lately
(app/summarise.py). Who may: whoever can read the repository's datastore;
it reads and changes nothing."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, human_size, say, table


def _command(name: str):
    help_text = f"""What the repository did lately: method and workflow runs by
    status, the failures, each workflow and model, the data written and who
    started what.

    Example: swamp {name} --since 1d

    Example: swamp {name} --since 7d --limit 10 --json"""

    @click.command(name, help=help_text)
    @click.option("--since", default="7d", show_default=True, metavar="WHEN",
                  help="The window: a duration back from now (1h, 1d, 7d, 1w) or a time (2026-01-31T12:00:00Z).")
    @click.option("--limit", type=click.IntRange(1), metavar="N",
                  help="At most N entries in each list (the counts are of everything in the window).")
    @global_options
    @click.pass_obj
    def command(state: CliState, since, limit):
        from swamp.app.summarise import summarise

        doc = summarise(state.repo(), since=since, limit=limit)
        emit(state, doc, lambda: _human(doc))

    return command


def _counts(c: dict) -> str:
    rest = ", ".join(f"{v} {k}" for k, v in c.items() if k != "total")
    return f"{c['total']}" + (f" ({rest})" if rest else "")


def _human(doc: dict) -> None:
    say(f"since {doc['since']} ({doc['window']}):")
    say(f"  workflow runs: {_counts(doc['workflowRuns'])}")
    say(f"  method runs:   {_counts(doc['methodRuns'])}")
    say(f"  data written:  {doc['data']['versions']} version(s), {human_size(doc['data']['bytes'])}")
    if doc["failures"]:
        say("failures:")
        table(doc["failures"], ["kind", "name", "id", "status", "startedAt", "initiatedBy"])
    if doc["workflows"]:
        say("workflows:")
        table(doc["workflows"], ["name", "runs", "failed", "lastStatus", "lastStartedAt"])
    if doc["models"]:
        say("models:")
        table(doc["models"], ["name", "runs", "failed", "lastStatus", "lastStartedAt"])
    if doc["data"]["names"]:
        say("data:")
        table([{**d, "bytes": human_size(d["bytes"])} for d in doc["data"]["names"]],
              ["model", "name", "versions", "bytes", "newestAt"])
    if doc["who"]:
        say("who:")
        table(doc["who"], ["actor", "runs", "failed"])


summarise = _command("summarise")
summarize = _command("summarize")
