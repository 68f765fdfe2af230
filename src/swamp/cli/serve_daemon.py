"""`swamp serve daemon enable|disable|status`: `swamp serve` as a user
service (cli/daemons.py, app/daemons.py)."""

from __future__ import annotations

import click

from swamp.cli.daemons import dry_run_option, env_file_option, finish_enable, flags, group
from swamp.cli.options import CliState, global_options


@click.command("enable")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address the server listens on.")
@click.option("--port", type=click.IntRange(1, 65535), default=9090, show_default=True, help="Its TCP port.")
@click.option("--cert-file", help="TLS certificate (PEM); a relative path is in the repository.")
@click.option("--key-file", help="TLS private key (PEM); a relative path is in the repository.")
@click.option("--auth-mode", type=click.Choice(["none", "token"]), default="token", show_default=True,
              help="As swamp serve's: token needs a token on every request.")
@click.option("--insecure", is_flag=True, help="Allow --auth-mode none on a non-loopback address.")
@click.option("--dashboard", is_flag=True, help="Also serve the dashboard under /ui/.")
@click.option("--schedule", "schedules", multiple=True, metavar="NAME=WORKFLOW@CRON", help="Repeatable.")
@click.option("--webhook", "webhooks", multiple=True, metavar="NAME=WORKFLOW[:INPUT]",
              help="Repeatable; its secret $SWAMP_WEBHOOK_<NAME>_SECRET goes in --env-file.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME[:PORT]", help="Repeatable.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN", help="Repeatable.")
@click.option("--max-runs", type=click.IntRange(1), metavar="N", help="At most N runs at once.")
@click.option("--scheduler", metavar="ADDRESS", help="Dispatch placed steps to this Dask scheduler.")
@env_file_option
@dry_run_option
@global_options
@click.pass_obj
def enable(state: CliState, host, port, cert_file, key_file, auth_mode, insecure, dashboard, schedules, webhooks,
           allow_hosts, allow_origins, max_runs, scheduler, env_file, dry_run):
    """Install and start this repository's 'swamp serve' as a user service
    with these options (a systemd user unit; a launchd agent on macOS),
    restarted if it fails. Exits 1 where neither is available, unless
    --dry-run (which prints the unit).

    Example: swamp serve daemon enable --port 9090 --dashboard --dry-run
    Example: swamp serve daemon enable --webhook deploy=deploy --env-file ~/.config/swamp/serve.env"""
    from swamp.errors import UsageError
    from swamp.serve import process  # the server process the service runs

    if bool(cert_file) != bool(key_file):
        raise UsageError("--cert-file and --key-file go together")
    process.check_exposure(host, auth_mode, insecure)
    root = state.repo().root
    if cert_file:  # checked now, so the service does not fail at its start
        from swamp.cli.repo_paths import existing_file

        cert_file, key_file = existing_file(cert_file, root, "--cert-file"), existing_file(key_file, root,
                                                                                            "--key-file")
    _check_specs(schedules, webhooks)
    args = flags([("--host", host), ("--port", port), ("--cert-file", cert_file), ("--key-file", key_file),
                  ("--auth-mode", auth_mode), ("--insecure", insecure), ("--dashboard", dashboard),
                  ("--schedule", schedules), ("--webhook", webhooks), ("--allow-host", allow_hosts),
                  ("--allow-origin", allow_origins), ("--max-runs", max_runs), ("--scheduler", scheduler)])
    finish_enable(state, "serve", args, env_file, dry_run)


def _check_specs(schedules, webhooks) -> None:
    """The --schedule and --webhook values parse as swamp serve will parse
    them (a webhook's secret is the service's, read when it starts)."""
    from swamp.serve import process

    for s in schedules:
        process.parse_schedule(s)
    for w in webhooks:
        name = w.partition("=")[0]
        process.parse_webhook(w, env={process.secret_variable(name): "x" * 16})


daemon = group("serve", enable)
