"""`swamp serve`: the HTTP API (see docs/serve.md)."""

from __future__ import annotations

import click

from swamp.cli.groups import CommandWithSubcommands
from swamp.cli.options import CliState, global_options
from swamp.cli.worker_links import link_options

#: runs at once per caller unless --max-runs-per-caller says otherwise: enough for a team's
#: parallel jobs, few enough that one caller cannot take every thread of the server
DEFAULT_RUNS_PER_CALLER = 8


@click.command("serve", cls=CommandWithSubcommands)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=9090, show_default=True, help="The TCP port to listen on.")
@click.option("--cert-file", type=click.Path(dir_okay=False), help="TLS certificate (PEM); a relative path is "
              "in the repository.")
@click.option("--key-file", type=click.Path(dir_okay=False), help="TLS private key (PEM); a relative path is in "
              "the repository.")
@click.option("--auth-mode", type=click.Choice(["none", "token"]), default="token", show_default=True,
              help="token: every request needs a token (the local user's, made at start, or a minted one "
                   "with a grant). none: anyone who can connect may do anything.")
@click.option("--insecure", is_flag=True, help="Allow --auth-mode none on a non-loopback address.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME[:PORT]",
              help="Also answer requests whose Host is NAME (any port) or NAME:PORT, e.g. the name a proxy "
                   "in front uses; '*' answers any Host. Repeatable.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="Also take state-changing requests from web pages of ORIGIN (scheme://host[:port]). "
                   "Repeatable.")
@click.option("--max-body", type=click.IntRange(1), default=1024 * 1024, show_default=True, metavar="BYTES",
              help="The largest request body accepted.")
@click.option("--shutdown-timeout", type=click.FloatRange(0), default=30.0, show_default=True, metavar="SECONDS",
              help="On SIGTERM, how long runs in flight may finish before they are asked to stop.")
@click.option("--max-runs", type=click.IntRange(1), metavar="N",
              help="At most N runs (methods, workflows) at once; more get 429.")
@click.option("--max-runs-per-caller", type=click.IntRange(1), metavar="N", default=DEFAULT_RUNS_PER_CALLER,
              show_default=True,
              help="At most N runs at once per caller (token; everyone is one caller with --auth-mode none).")
@click.option("--header-timeout", type=click.FloatRange(0, min_open=True), default=10.0, show_default=True,
              metavar="SECONDS", help="Close a connection whose request headers take longer to arrive.")
@click.option("--body-timeout", type=click.FloatRange(0, min_open=True), default=20.0, show_default=True,
              metavar="SECONDS", help="Close a connection whose request body takes longer to arrive.")
@click.option("--max-connections", type=click.IntRange(1), default=1000, show_default=True, metavar="N",
              help="At most N connections at once (fewer if the open-file limit is lower); over it, the oldest "
                   "idle or half-sent one is closed.")
@click.option("--max-run-duration", type=click.FloatRange(0, min_open=True), metavar="SECONDS",
              help="Ask a workflow run going longer to stop (its steps in flight are stopped; recorded cancelled).")
@click.option("--webhook", "webhooks", multiple=True, metavar="NAME=WORKFLOW[:INPUT]",
              help="POST /hooks/NAME, signed with the secret in $SWAMP_WEBHOOK_<NAME>_SECRET, runs WORKFLOW "
                   "with the JSON body as its inputs (or as input INPUT). Repeatable.")
@click.option("--schedule", "schedules", multiple=True, metavar="NAME=WORKFLOW@CRON",
              help="Run WORKFLOW at each tick of CRON (UTC; 5 fields, or 6 with seconds first). With several "
                   "replicas each tick fires once. Repeatable.")
@click.option("--no-schedules", is_flag=True, help="Fire no schedule: neither the workflows' triggers "
              "(trigger.schedule, 'workflow trigger set') nor --schedule. For a replica that only answers requests.")
@click.option("--dashboard", is_flag=True, help="Also serve the dashboard: web pages under /ui/ (runs, approvals, "
              "data, the datastore, the audit log).")
@click.option("--scheduler", envvar="SWAMP_SCHEDULER", metavar="ADDRESS",
              help="Dispatch placed workflow steps to the workers of this Dask scheduler (swamp docs workers).")
@click.option("--remote-only", is_flag=True, help="Fail a model_method step without placement instead of "
              "running it in this process.")
@link_options("--insecure-scheduler")
@click.option("--audit-log", type=click.Path(dir_okay=False), help="Where the audit log goes "
              "(default .swamp/cache/serve/audit.jsonl).")
@click.option("--reuse-port", is_flag=True, help="Share --port with this user's other 'swamp serve --reuse-port' "
              "processes (Linux SO_REUSEPORT): the kernel spreads connections across them, a core each.")
@global_options
@click.pass_obj
def serve(state: CliState, host, port, cert_file, key_file, auth_mode, insecure, max_body, shutdown_timeout,
          max_runs, max_runs_per_caller, max_run_duration, webhooks, schedules, dashboard, audit_log,
          scheduler=None, remote_only=False, allow_hosts=(), allow_origins=(), header_timeout=10.0,
          body_timeout=20.0, max_connections=1000, link=None, no_schedules=False,
          reuse_port=False):
    """Serve this repository's use cases as an HTTP JSON API. As a user
    service: 'swamp serve daemon enable|disable|status'.

    Example: swamp serve --port 9090, then curl http://127.0.0.1:9090/health"""
    from pathlib import Path

    from swamp.errors import UsageError
    from swamp.serve import process  # the server process this command becomes

    if bool(cert_file) != bool(key_file):
        raise UsageError("--cert-file and --key-file go together")
    if cert_file:  # relative to the repository, as every repository path is (not to where swamp was started)
        from swamp.cli.repo_paths import existing_file

        root = None if Path(cert_file).is_absolute() and Path(key_file).is_absolute() else state.repo().root
        cert_file, key_file = existing_file(cert_file, root, "--cert-file"), existing_file(key_file, root, "--key-file")
    process.check_exposure(host, auth_mode, insecure)
    if reuse_port and not port:
        raise UsageError("--reuse-port shares a port: give it one with --port", hint="e.g. --port 9090")
    for origin in allow_origins:
        if not origin.startswith(("http://", "https://")) or origin.count("/") != 2:
            raise UsageError(f"--allow-origin {origin!r} is not an origin",
                             hint="an origin is scheme://host[:port], e.g. https://ops.example.com")
    try:
        Settings, run = process.server()
    except ImportError as e:
        from swamp.errors import SwampError

        raise SwampError(f"swamp serve needs the serve extra ({e.name} is missing)",
                         hint="pip install 'swamp[serve]'") from None
    hooks = {h.name: h for h in map(process.parse_webhook, webhooks)}
    timed = [process.parse_schedule(s) for s in schedules]
    if len({s.name for s in timed}) != len(timed):
        raise UsageError("two --schedule options have the same NAME")
    if no_schedules and timed:
        raise UsageError("--no-schedules and --schedule contradict each other", hint="give one of them")
    repo = state.repo()
    process.check_targets(repo, timed, hooks)  # a typo in a workflow's name: refused now, not at every tick
    if scheduler or remote_only:  # placed steps of every run on its one session go to workers
        from swamp.app import placed_steps

        placed_steps.attach(repo, placed_steps.open_placed_steps(scheduler, link=link, remote_only=remote_only))
    settings = Settings(webhooks=hooks, schedules=timed, triggers=not no_schedules, auth_mode=auth_mode,
                        max_body=max_body, shutdown_timeout=shutdown_timeout,
                        audit_path=Path(audit_log).absolute() if audit_log else None, max_runs=max_runs,
                        max_runs_per_principal=max_runs_per_caller, max_run_duration=max_run_duration,
                        dashboard=dashboard, bind_host=host, port=port, allow_hosts=tuple(allow_hosts),
                        allow_origins=tuple(allow_origins), header_timeout=header_timeout,
                        body_timeout=body_timeout, max_connections=max_connections)
    if auth_mode == "token" and port:
        from swamp.app.logins import ensure

        settings.local_token, settings.local_token_file = ensure(host, port)
    run(repo, host=host, port=port, settings=settings, cert_file=cert_file, key_file=key_file, reuse_port=reuse_port)


# serve reload (docs/serve.md#reloading-a-running-server) and serve daemon
# enable|disable|status (a user service running swamp serve)
from swamp.cli.serve_daemon import daemon as _daemon  # noqa: E402
from swamp.cli.serve_reload import reload as _reload  # noqa: E402

serve.subcommands["daemon"] = _daemon
serve.subcommands["reload"] = _reload
