"""`swamp worker daemon enable|disable|status`: `swamp worker start` as a
user service (cli/daemons.py, app/daemons.py). The worker's link to the
scheduler is authenticated by the team's certificates, which stay files
in their folder: the unit names the folder, never a key."""

from __future__ import annotations

import click

from swamp.cli.daemons import dry_run_option, env_file_option, finish_enable, flags, group
from swamp.cli.options import CliState, global_options


@click.command("enable")
@click.option("--scheduler", envvar="SWAMP_SCHEDULER", required=True, metavar="ADDRESS",
              help="The Dask scheduler, tls://HOST:8786 (tcp:// only with --insecure). Default: $SWAMP_SCHEDULER.")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE", help="A placement label. Repeatable.")
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True,
              help="How many steps the worker runs at once.")
@click.option("--name", help="The worker's name (placement.target).")
@click.option("--host", help="The address the worker listens on.")
@click.option("--team-certs", metavar="DIR", type=click.Path(file_okay=False),
              help="The folder of the team's certificates (default: the worker's own default).")
@click.option("--cert-name", metavar="NAME", help="The team certificate the worker presents.")
@click.option("--insecure", is_flag=True, help="Allow a tcp:// scheduler (NOT authenticated, NOT encrypted).")
@env_file_option
@dry_run_option
@global_options
@click.pass_obj
def enable(state: CliState, scheduler, labels, concurrency, name, host, team_certs, cert_name, insecure,
           env_file, dry_run):
    """Install and start this repository's 'swamp worker start' as a user
    service with these options (a systemd user unit; a launchd agent on
    macOS), restarted if it fails. Exits 1 where neither is available,
    unless --dry-run (which prints the unit).

    Example: swamp worker daemon enable --scheduler tls://10.0.0.5:8786 --label region=eu --name eu-1 --dry-run"""
    from pathlib import Path

    from swamp.app.worker_fleet import parse_labels

    parse_labels(labels)  # a wrong label fails now, not when the service starts
    if team_certs is not None:
        team_certs = str(Path(team_certs).expanduser().absolute())
    args = flags([("--scheduler", scheduler), ("--label", labels), ("--concurrency", concurrency), ("--name", name),
                  ("--host", host), ("--team-certs", team_certs), ("--cert-name", cert_name),
                  ("--insecure", insecure)])
    finish_enable(state, "worker", args, env_file, dry_run)


daemon = group("worker", enable)
