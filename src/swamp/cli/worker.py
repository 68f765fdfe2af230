"""`swamp worker start|list|scheduler`, `swamp worker ca create`, `swamp
worker cert issue|list`: Dask workers that run placed workflow steps, and
the team certificates their links are authenticated with (docs/workers.md)."""

from __future__ import annotations

from pathlib import Path

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table
from swamp.cli.worker_links import link_options

scheduler_option = click.option(
    "--scheduler", envvar="SWAMP_SCHEDULER", required=True, metavar="ADDRESS",
    help="The Dask scheduler, tls://HOST:8786 (tcp:// only with --insecure). Default: $SWAMP_SCHEDULER.")

dir_option = click.option(
    "--dir", "folder", envvar="SWAMP_TEAM_CERTS", metavar="DIR", type=click.Path(file_okay=False, path_type=Path),
    help="The folder of the team's certificates. Default: $SWAMP_TEAM_CERTS, or ~/.config/swamp/team-certs.")


@click.group()
def worker():
    """Workers that run placed workflow steps, on Dask.

    Example: swamp worker list --scheduler tls://127.0.0.1:8786"""


@worker.command("start")
@scheduler_option
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
              help="A label steps can be placed by (placement.labels). Repeatable.")
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True,
              help="How many steps this worker runs at once.")
@click.option("--name", help="The worker's name (placement.target). Default: one Dask picks.")
@click.option("--host", help="The address this worker listens on. Default: this machine's address on the route "
                             "to the scheduler (loopback for a scheduler on this machine).")
@link_options()
@global_options
@click.pass_obj
def start(state: CliState, scheduler, labels, concurrency, name, host, link):
    """Start a worker connected to the scheduler; it runs steps until
    stopped (Ctrl-C or SIGTERM). It needs this repository's checkout with
    the shared datastore set up, and holds no vault key: a step's secrets
    come with the step. On a tls:// scheduler it presents this machine's
    team certificate (--cert-name, default its --name). With --token (an
    enrolment token; '-' reads stdin; or $SWAMP_WORKER_TOKEN) it first
    enrols this machine through the shared datastore ('swamp worker enrol').

    Example: swamp worker start --scheduler tls://10.0.0.5:8786 --label region=eu --name eu-1

    Example: swamp worker start --token - --scheduler tls://10.0.0.5:8786 --label region=eu"""
    from swamp.app.worker_fleet import worker_start
    from swamp.cli.worker_tokens import given_token, read_token
    from swamp.workers import worker as worker_process  # the process this command becomes (test_layering.py)

    repo, token = state.repo(), given_token(state)  # --token: enrol first (app/team_certs.py)
    plan = worker_start(repo, scheduler, labels=labels, concurrency=concurrency, name=name, host=host,
                        link=link, token=read_token(token) if token else None)

    def ready(w):
        info = {"name": str(w.name), "address": w.address, "scheduler": scheduler, "labels": plan.labels,
                "concurrency": concurrency}
        emit(state, info, f"worker {w.name} ({w.address}) connected to {scheduler}"
             + (f", labels {', '.join(f'{k}={v}' for k, v in sorted(plan.labels.items()))}" if plan.labels else ""))

    worker_process.start(repo, plan.scheduler, labels=plan.labels, concurrency=plan.concurrency, name=plan.name,
                         link=plan.link, host=plan.host, on_ready=ready)
    if not state.json:
        say("worker stopped")


@worker.command("list")
@scheduler_option
@link_options()
@global_options
@click.pass_obj
def list_(state: CliState, scheduler, link):
    """List the swamp workers connected to the scheduler: labels,
    concurrency, the steps each runs now.

    Example: swamp worker list --scheduler tls://127.0.0.1:8786"""
    from swamp.app.worker_fleet import list_workers

    rows = list_workers(scheduler, link=link)

    def human():
        table([{**r, "labels": ",".join(f"{k}={v}" for k, v in sorted(r["labels"].items())),
                "running": ", ".join(r["running"]) or "-"} for r in rows],
              ["name", "address", "labels", "concurrency", "running"])

    emit(state, rows, human)


@worker.command("scheduler")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; give the one your workers reach (never every interface "
                   "unless you mean it).")
@click.option("--port", type=click.IntRange(0, 65535), default=8786, show_default=True,
              help="The port (0: any free one).")
@link_options()
@global_options
@click.pass_obj
def scheduler_(state: CliState, host, port, link):
    """Run a Dask scheduler for swamp's workers until stopped (Ctrl-C or
    SIGTERM): tls:// with the team certificate 'scheduler' (--cert-name),
    so only holders of the team's certificates can connect; no dashboard.

    Example: swamp worker scheduler --host 127.0.0.1 --port 8786"""
    from swamp.workers import scheduler as scheduler_process  # the process this command becomes (test_layering.py)

    def ready(address):
        emit(state, {"address": address}, f"scheduler listening on {address}")

    scheduler_process.run(host=host, port=port, link=link, on_ready=ready)
    if not state.json:
        say("scheduler stopped")


@worker.group("ca")
def ca():
    """The team's certificate authority, which enrols workers, the
    scheduler and dispatching machines.

    Example: swamp worker ca create"""


@ca.command("create")
@dir_option
@click.option("--days", type=click.IntRange(1), default=3650, show_default=True, help="How long the CA is valid.")
@global_options
@click.pass_obj
def ca_create(state: CliState, folder, days):
    """Create the team's CA: ca.pem (every party needs it) and ca-key.pem
    (mode 0600; keep it where you issue certificates, nowhere else).
    Refused when the folder has one.

    Example: swamp worker ca create"""
    from swamp.app import team_certs

    row = team_certs.create_ca(folder, days=days)
    emit(state, row, f"team CA created: {row['certificate']} (key {row['key']}, mode 0600)")


@worker.group("cert")
def cert():
    """Certificates the team's CA signs, one per worker, scheduler and
    dispatching machine.

    Example: swamp worker cert issue eu-1"""


@cert.command("issue")
@click.argument("name")
@dir_option
@click.option("--days", type=click.IntRange(1), default=365, show_default=True,
              help="How long the certificate is valid (never past the CA's end).")
@click.option("--replace", is_flag=True, help="Issue a new one where NAME already has a certificate.")
@global_options
@click.pass_obj
def cert_issue(state: CliState, name, folder, days, replace):
    """Issue a certificate NAME.pem and its key NAME-key.pem (mode 0600),
    signed by the team's CA. NAME is what the process presents: a worker's
    --name, 'scheduler', 'dispatcher' (the defaults), or any --cert-name.

    Example: swamp worker cert issue eu-1"""
    from swamp.app import team_certs

    row = team_certs.issue_cert(name, folder, days=days, replace=replace)
    emit(state, row, f"certificate {name} issued: {row['certificate']} (key {row['key']}, mode 0600), "
                     f"valid until {row['notAfter']}")


@cert.command("list")
@dir_option
@global_options
@click.pass_obj
def cert_list(state: CliState, folder):
    """List the team's certificates in the folder, by name: validity,
    whether the team CA signed each and whether its key is here.

    Example: swamp worker cert list"""
    from swamp.app import team_certs

    rows = team_certs.list_certs(folder)

    def human():
        table([{**r, "key": "yes" if r["key"] else "-", "expired": "EXPIRED" if r["expired"] else "-",
                "signedByTeamCa": "yes" if r["signedByTeamCa"] else "NO"} for r in rows],
              ["name", "notAfter", "expired", "signedByTeamCa", "key"], ["name", "valid until", "expired",
                                                                          "signed by team CA", "key here"])

    emit(state, rows, human)


# swamp worker daemon enable|disable|status (a user service running swamp worker start)
from swamp.cli.worker_daemon import daemon as _daemon  # noqa: E402

worker.add_command(_daemon)

# swamp worker token create|list|revoke, swamp worker enrol (enrolment through the datastore)
from swamp.cli.worker_tokens import enrol as _enrol, token_group as _token_group  # noqa: E402

worker.add_command(_token_group)
worker.add_command(_enrol)

# swamp worker queue|verify (what waits for a worker; whether each answers)
from swamp.cli.worker_fleet import queue as _queue, verify as _verify  # noqa: E402

worker.add_command(_queue)
worker.add_command(_verify)
