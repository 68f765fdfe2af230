"""`swamp worker start|list`: Dask workers that run placed workflow steps
(docs/workers.md)."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table

scheduler_option = click.option(
    "--scheduler", envvar="SWAMP_SCHEDULER", required=True, metavar="ADDRESS",
    help="The Dask scheduler, tcp://HOST:8786 (or tls://...). Default: $SWAMP_SCHEDULER.")


@click.group()
def worker():
    """Workers that run placed workflow steps, on Dask.

    Example: swamp worker list --scheduler tcp://127.0.0.1:8786"""


@worker.command("start")
@scheduler_option
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
              help="A label steps can be placed by (placement.labels). Repeatable.")
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True,
              help="How many steps this worker runs at once.")
@click.option("--name", help="The worker's name (placement.target). Default: one Dask picks.")
@global_options
@click.pass_obj
def start(state: CliState, scheduler, labels, concurrency, name):
    """Start a worker connected to the scheduler; it runs steps until
    stopped (Ctrl-C or SIGTERM). It needs this repository's checkout with
    the shared datastore set up, and holds no vault key: a step's secrets
    come with the step.

    Example: swamp worker start --scheduler tcp://10.0.0.5:8786 --label region=eu"""
    from swamp.workers import worker as workers
    from swamp.workers.placement import parse_labels

    parsed = parse_labels(labels)
    repo = state.repo()

    def ready(w):
        info = {"name": str(w.name), "address": w.address, "scheduler": scheduler, "labels": parsed,
                "concurrency": concurrency}
        emit(state, info, f"worker {w.name} ({w.address}) connected to {scheduler}"
             + (f", labels {', '.join(f'{k}={v}' for k, v in sorted(parsed.items()))}" if parsed else ""))

    workers.start(repo, scheduler, labels=parsed, concurrency=concurrency, name=name, on_ready=ready)
    if not state.json:
        say("worker stopped")


@worker.command("list")
@scheduler_option
@global_options
@click.pass_obj
def list_(state: CliState, scheduler):
    """List the swamp workers connected to the scheduler: labels,
    concurrency, the steps each runs now.

    Example: swamp worker list --scheduler tcp://127.0.0.1:8786"""
    from swamp.workers.worker import list_workers

    rows = list_workers(scheduler)

    def human():
        table([{**r, "labels": ",".join(f"{k}={v}" for k, v in sorted(r["labels"].items())),
                "running": ", ".join(r["running"]) or "-"} for r in rows],
              ["name", "address", "labels", "concurrency", "running"])

    emit(state, rows, human)
