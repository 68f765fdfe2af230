"""`swamp worker queue` and `swamp worker verify`: what waits for a worker,
and whether each worker answers (app/worker_fleet.py).

Who may: whoever holds a team certificate the scheduler accepts (these
commands present 'dispatcher' unless --cert-name says another); a process
without one is refused by the scheduler's TLS before anything is read."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table
from swamp.cli.worker_links import link_options

scheduler_option = click.option(
    "--scheduler", envvar="SWAMP_SCHEDULER", required=True, metavar="ADDRESS",
    help="The Dask scheduler, tls://HOST:8786 (tcp:// only with --insecure). Default: $SWAMP_SCHEDULER.")


def _labels(labels: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "-"


@click.command("queue")
@scheduler_option
@link_options()
@global_options
@click.pass_obj
def queue(state: CliState, scheduler, link):
    """List the placed steps waiting for a worker, oldest first: their
    labels or target, since when, and the connected workers that fit
    (busy or not). No fitting worker: start one with those labels.

    Example: swamp worker queue --scheduler tls://127.0.0.1:8786

    Example: swamp worker queue --scheduler tls://127.0.0.1:8786 --json"""
    from swamp.app.worker_fleet import queue as waiting

    rows = waiting(scheduler, link=link)

    def human():
        if not rows:
            say("no placed step is waiting")
            return
        table([{**r, "labels": _labels(r["labels"]), "target": r["target"] or "-",
                "fits": ", ".join(f["name"] + (" (busy)" if f["busy"] else "") for f in r["fittingWorkers"])
                or "none connected"} for r in rows],
              ["step", "labels", "target", "since", "state", "fits"],
              ["step", "labels", "target", "waiting since", "state", "fitting workers"])

    emit(state, rows, human)


@click.command("verify")
@click.argument("name", required=False)
@scheduler_option
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
              help="Only the workers with this label. Repeatable.")
@click.option("--timeout", type=click.FloatRange(1), default=30.0, show_default=True,
              help="Seconds each worker has to answer.")
@link_options()
@global_options
@click.pass_obj
def verify(state: CliState, name, scheduler, labels, timeout, link):
    """Ask each connected swamp worker (or NAME, or those with --label) to
    answer over the team's TLS: its swamp version, labels, the certificate
    it presents and whether its shared datastore answers. Exits 1 when one
    does not answer or its datastore does not.

    Example: swamp worker verify --scheduler tls://127.0.0.1:8786

    Example: swamp worker verify eu-1 --scheduler tls://127.0.0.1:8786 --json"""
    import sys

    from swamp.app import worker_fleet

    rows = worker_fleet.verify(scheduler, link=link, name=name, labels=labels, timeout=timeout)

    def human():
        table([{**r, "labels": _labels(r["labels"]), "ok": "ok" if r["ok"] else "FAILED",
                "version": (r["version"] or "-") + ("" if r["sameVersion"] in (True, None) else " (differs)"),
                "error": r["error"] or "-"} for r in rows],
              ["name", "ok", "version", "labels", "certificate", "datastore", "error"])

    emit(state, rows, human)
    if worker_fleet.failed(rows):
        sys.exit(1)
