"""`swamp worker token create|list|revoke` and `swamp worker enrol`:
enrolment of a worker machine through the shared datastore
(app/team_certs.py, app/worker_tokens.py, docs/workers.md "Enrolling with a token").

Who may: `token create` and `token revoke` need the team CA's key in the
folder (--dir), so only the CA holder makes or revokes tokens; `token list`
shows names and states (no secret) to anyone with the repository; `enrol`
needs the token, which is shown once, to its creator."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table

dir_option = click.option(
    "--dir", "folder", envvar="SWAMP_TEAM_CERTS", metavar="DIR", type=click.Path(file_okay=False, path_type=Path),
    help="The folder of the team's certificates. Default: $SWAMP_TEAM_CERTS, or ~/.config/swamp/team-certs.")

@click.group("token")
def token_group():
    """Enrolment tokens: a new worker machine exchanges one, once, for its
    team certificate through the shared datastore.

    Example: swamp worker token create ci-runner-3 --duration 24h"""


@token_group.command("create")
@click.argument("name")
@click.option("--duration", default="24h", show_default=True, metavar="DURATION",
              help="How long the token can be used (30m, 24h, 7d). It is used once.")
@click.option("--days", type=click.IntRange(1), default=365, show_default=True,
              help="How long the certificate it enrols is valid.")
@click.option("--max-enrollments", default="1", metavar="N",
              help="How many machines the token enrols: 1 (one certificate per machine; make a token each).")
@dir_option
@global_options
@click.pass_obj
def create(state: CliState, name, duration, days, max_enrollments, folder):
    """Issue the certificate NAME (the worker's --name) with the team CA
    in --dir, seal it in the shared datastore, and print the token that
    opens it, once. Only the CA holder can: it needs ca-key.pem. The
    datastore keeps the token's hash only.

    Example: swamp worker token create ci-runner-3 --duration 24h

    Example: swamp worker token create eu-2 --duration 7d --json"""
    from swamp.app import team_certs

    row = team_certs.create_token(state.repo(), name, folder=folder, duration=duration, days=days,
                                  max_enrollments=max_enrollments)

    def human():
        say(f"worker token {name} created; it expires at {row['expiresAt']} and enrols one machine:")
        say(row["token"])
        say("on the worker: swamp worker start --token TOKEN --scheduler ADDRESS (or 'swamp worker enrol "
            "--token TOKEN'); it is shown only now")

    emit(state, row, human)


@token_group.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """List the enrolment tokens by name: pending, used, revoked or
    expired, with who made, used or revoked each. No secret is shown.

    Example: swamp worker token list"""
    from swamp.app import worker_tokens

    rows = worker_tokens.list_tokens(state.repo())

    def human():
        if not rows:
            say("no worker tokens")
            return
        table([{**r, "by": r["enrolledBy"] or r["revokedBy"] or "-"} for r in rows],
              ["name", "state", "expiresAt", "createdBy", "by"],
              ["name", "state", "expires", "created by", "used/revoked by"])

    emit(state, rows, human)


@token_group.command("revoke")
@click.argument("name")
@dir_option
@global_options
@click.pass_obj
def revoke(state: CliState, name, folder):
    """Refuse any further use of NAME's token, delete its sealed
    certificate from the datastore, and record who revoked it. Only the
    holder of the CA that issued it can (its ca-key.pem in --dir). A
    machine that already enrolled keeps its certificate until it ends.

    Example: swamp worker token revoke ci-runner-3"""
    from swamp.app import team_certs

    row = team_certs.revoke_token(state.repo(), name, folder=folder)
    emit(state, row, f"worker token {name} revoked by {row['revokedBy']}")


def given_token(state: CliState) -> str | None:
    """The enrolment token of `worker start|enrol`: the global --token (which
    these commands read themselves: they never run on a server), else
    $SWAMP_WORKER_TOKEN."""
    import os

    return state.token or os.environ.get("SWAMP_WORKER_TOKEN") or None


def read_token(token: str | None) -> str:
    from swamp.errors import UsageError

    if token == "-":
        token = sys.stdin.readline()
    token = (token or "").strip()
    if not token:
        raise UsageError("no enrolment token given", hint="pass --token TOKEN (or '-' for stdin, or "
                                                          "$SWAMP_WORKER_TOKEN)")
    return token


@click.command("enrol")
@click.option("--team-certs", "folder", envvar="SWAMP_TEAM_CERTS", metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="Where to put the certificate. Default: $SWAMP_TEAM_CERTS, or ~/.config/swamp/team-certs.")
@global_options
@click.pass_obj
def enrol(state: CliState, folder):
    """Exchange an enrolment token (--token TOKEN, '-' for stdin, or
    $SWAMP_WORKER_TOKEN) for this machine's team certificate:
    ca.pem, NAME.pem and NAME-key.pem (mode 0600) in the team-certs
    folder, from the shared datastore of this repository. A token works
    once; a used, revoked or expired one is refused, saying by whom.

    Example: swamp worker enrol --token swamp-enrol-...

    Example: printf %s "$TOKEN" | swamp worker enrol --token - --json"""
    from swamp.app import team_certs

    row = team_certs.enrol(state.repo(), read_token(given_token(state)), folder)
    emit(state, row, f"enrolled as {row['name']}: start it with 'swamp worker start --name {row['name']} "
                     "--scheduler ADDRESS'")
