"""``swamp auth``: the tokens this user keeps for ``swamp serve`` servers.

``server-login URL`` checks a token with the server and keeps it for that
URL (``app/logins.py``: mode 0600, beside the local user's tokens),
so ``--server URL`` needs no ``--token``; ``logout`` forgets it; ``whoami``
says who a server takes you for. They read ``--server`` and ``--token``
themselves (cli/remote.py's SELF_SERVED), and only this user's files."""

from __future__ import annotations

import os
import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say
from swamp.errors import UsageError


@click.group()
def auth():
    """Tokens kept per swamp serve URL, so --server needs no --token.

    Example: swamp auth server-login https://swamp.example.com --token ci.SECRET"""


def _url(state: CliState, url: str | None) -> str:
    chosen = url or state.server or os.environ.get("SWAMP_SERVE_URL")
    if not chosen:
        raise UsageError("which server? give its URL (or --server URL, or SWAMP_SERVE_URL)",
                         hint="e.g. swamp auth server-login https://swamp.example.com --token NAME.SECRET")
    if url and state.server and url.rstrip("/") != state.server.rstrip("/"):
        raise UsageError(f"two servers given: {url} and --server {state.server}", hint="give one")
    return chosen.rstrip("/")


def _ask_server(url: str, token: str | None) -> dict:
    from swamp.cli.remote import Client

    return Client(url, token).call("GET", "/whoami")[1]


def _read_token(state: CliState) -> str:
    if state.token:
        return state.token.strip()
    if sys.stdin.isatty():
        return click.prompt("Token (NAME.SECRET)", hide_input=True).strip()
    line = sys.stdin.readline().strip()  # piped: a secret never needs to be on the command line
    if not line:
        raise UsageError("no token: pass --token NAME.SECRET or pipe it on stdin")
    return line


@auth.command("server-login")
@click.argument("url", required=False)
@click.option("--no-verify", is_flag=True, help="Keep the token without asking the server first.")
@global_options
@click.pass_obj
def server_login(state: CliState, url, no_verify):
    """Check a token with the server at URL and keep it for that URL (mode
    0600), so later commands with --server URL send it by themselves. The
    token comes from --token, else stdin (a prompt on a terminal).

    \b
    Example: swamp auth server-login https://swamp.example.com --token ci.SECRET
    Example: pass swamp/ci | swamp auth server-login https://swamp.example.com"""
    from swamp.app.logins import save_login

    url = _url(state, url)
    token = _read_token(state)
    if "." not in token:
        raise UsageError("a token looks like NAME.SECRET", hint="mint one with 'swamp access token mint NAME'")
    who = None if no_verify else _ask_server(url, token)  # a refused token is an error, and is not kept
    path = save_login(url, token)
    result = {"server": url, "file": str(path), "verified": who is not None,
              "actor": who["actor"] if who else None, "subjects": who["subjects"] if who else None}
    emit(state, result, f"logged in to {url}" + (f" as {who['actor']}" if who else " (not verified)")
         + f"; the token is kept in {path}")


@auth.command("logout")
@click.argument("url", required=False)
@global_options
@click.pass_obj
def logout(state: CliState, url):
    """Forget the token kept for URL (the server is not told: revoke a
    token with 'swamp access token revoke').

    Example: swamp auth logout https://swamp.example.com"""
    from swamp.app.logins import forget_login

    url = _url(state, url)
    path = forget_login(url)
    result = {"server": url, "loggedOut": path is not None, "file": str(path) if path else None}
    emit(state, result, f"forgot the token kept for {url}" if path else f"no token was kept for {url}")


@auth.command("whoami")
@global_options
@click.pass_obj
def whoami(state: CliState):
    """Who you are here, and with --server URL (or SWAMP_SERVE_URL) who
    that server takes you for, with the token --server would send.

    \b
    Example: swamp auth whoami
    Example: swamp auth whoami --server https://swamp.example.com --json"""
    from swamp.app.logins import for_url, login_for_url
    from swamp.util.actors import local_user

    url = state.server or os.environ.get("SWAMP_SERVE_URL")
    result: dict = {"local": local_user(), "server": None}
    if url:
        url = url.rstrip("/")
        token = state.token or os.environ.get("SWAMP_SERVE_TOKEN")
        source = "--token" if state.token else "SWAMP_SERVE_TOKEN" if token else None
        if token is None:
            token = for_url(url)
            source = ("login" if login_for_url(url)[0] else "local token") if token else None
        who = _ask_server(url, token)
        result.update(server=url, tokenFrom=source, actor=who["actor"], subjects=who["subjects"],
                      authMode=who["authMode"])

    def human():
        say(f"here: {result['local']}")
        if url:
            say(f"{url}: {result['actor']} (token from {result['tokenFrom'] or 'nowhere'}; "
                f"subjects {', '.join(result['subjects'])})")

    emit(state, result, human)
