"""`swamp access`: tokens for swamp serve, and checking the grants (grants
and groups by command: cli/access_admin.py)."""

from __future__ import annotations

import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table


@click.group()
def access():
    """Tokens, grants and groups for swamp serve.

    Example: swamp access token mint ci --user ci-bot"""


@access.group("token")
def token():
    """API tokens: NAME.SECRET, shown once, stored hashed (.swamp/secrets/serve/).

    Example: swamp access token list"""


def _show_new(state: CliState, result: dict, verb: str) -> None:
    def human():
        say(f"{verb} token {result['name']}. It is shown this once; keep it somewhere safe:")
        click.echo(result["token"])  # not through the redactor: this is the one place it is shown

    if state.json:
        import json

        click.echo(json.dumps(result, indent=2))  # the token itself, on purpose
    elif not state.quiet:
        human()


@token.command("mint")
@click.argument("name")
@click.option("--user", help="The user this token acts for (grants may name user:USER).")
@click.option("--group", "groups", multiple=True, help="A group this token belongs to (grants may name group:G).")
@global_options
@click.pass_obj
def mint(state: CliState, name, user, groups):
    """Create a token NAME and print it once.

    Example: swamp access token mint ci --user ci-bot --group deployers"""
    from swamp.app import access_tokens

    _show_new(state, access_tokens.mint(state.repo(), name, user=user, groups=list(groups)), "Minted")


@token.command("rotate")
@click.argument("name")
@global_options
@click.pass_obj
def rotate(state: CliState, name):
    """Give token NAME a new secret; the old one stops working at once.

    Example: swamp access token rotate ci"""
    from swamp.app import access_tokens

    _show_new(state, access_tokens.rotate(state.repo(), name), "Rotated")


@token.command("revoke")
@click.argument("name")
@global_options
@click.pass_obj
def revoke(state: CliState, name):
    """Revoke token NAME: a request with it gets 401 from the next one on.

    Example: swamp access token revoke ci"""
    from swamp.app import access_tokens

    result = access_tokens.revoke(state.repo(), name)
    emit(state, result, f"Revoked token {name}")


@token.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """Tokens (never their secrets).

    Example: swamp access token list --json"""
    from swamp.app import access_tokens

    rows = access_tokens.list_tokens(state.repo())
    emit(state, rows, lambda: table(rows, ["name", "user", "groups", "createdAt", "revoked"]))


@access.command("can-i")
@click.argument("action", type=click.Choice(["read", "run", "approve", "write", "admin"]))
@click.argument("resource")
@click.option("--subject", "subjects", multiple=True, metavar="KIND:NAME",
              help="As this subject (token:, user: or group:); repeatable.")
@global_options
@click.pass_obj
def can_i(state: CliState, action, resource, subjects):
    """Whether the grants allow ACTION on RESOURCE (e.g. run workflow:deploy)
    for --token NAME (its user and groups too) or --subject. Exits 0 when
    allowed, 1 when not.

    Example: swamp access can-i run workflow:deploy --subject user:ci-bot"""
    from swamp.app.access_admin import can_i as decide
    from swamp.app.access_tokens import subjects_for_name
    from swamp.errors import UsageError

    repo = state.repo()
    who = list(subjects)
    if state.token:  # the global --token: a token's name (or the token itself: its name is before the dot)
        who += subjects_for_name(repo, state.token.split(".", 1)[0])
    if not who:
        raise UsageError("say who: --token NAME or --subject KIND:NAME")
    result = decide(repo, subjects=who, action=action, resource=resource)
    grant = result["decidedBy"]

    def human():
        if grant is None:
            say(f"no: no grant allows {action} on {resource} for {', '.join(result['subjects'])}")
        else:
            say(f"{'yes' if result['allowed'] else 'no'}: {grant['effect']} in {grant['source']}")

    emit(state, result, human)
    if not result["allowed"]:
        sys.exit(1)


# access reload (docs/serve.md#access)
from swamp.cli.access_reload import reload as _reload  # noqa: E402

access.add_command(_reload)

# access grant, access group, access check (docs/serve.md#access)
from swamp.cli.access_admin import check as _check, grant as _grant, group as _group  # noqa: E402

for _command in (_grant, _group, _check):
    access.add_command(_command)
