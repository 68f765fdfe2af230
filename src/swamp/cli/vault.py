from __future__ import annotations

import json
import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, say, table


@click.group()
def vault():
    """Secrets, injected late and never written in clear."""


@vault.command("create")
@click.argument("vault_type", metavar="TYPE")
@click.argument("name")
@global_options
@click.pass_obj
def create(state: CliState, vault_type: str, name: str):
    """Create vault NAME of TYPE (local_encryption)."""
    from swamp.vault.service import create_vault

    result = create_vault(state.repo(), vault_type, name)
    emit(state, result, f"Created vault {result['name']} ({result['type']}) in {result['path']}")


@vault.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """List the repository's vaults."""
    from swamp.vault.service import list_vaults

    vaults = list_vaults(state.repo())
    emit(state, vaults, lambda: table(vaults, ["name", "type", "createdAt"]))


@vault.command("put")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@click.argument("value", required=False)
@global_options
@click.pass_obj
def put(state: CliState, vault_name: str, key: str, value: str | None):
    """Store a secret. Without VALUE it is read from stdin (one trailing
    newline dropped), which keeps it out of shell history."""
    from swamp.vault.names import check_key_name, check_vault_name
    from swamp.vault.service import put_secret

    # Refuse bad names before waiting on stdin.
    check_vault_name(vault_name)
    check_key_name(key)
    repo = state.repo()
    if value is None:
        value = _read_value()
    result = put_secret(repo, vault_name, key, value)
    verb = "Replaced" if result["overwritten"] else "Stored"
    emit(state, result, f"{verb} {key} in vault {vault_name}")


def _read_value() -> str:
    if sys.stdin.isatty():
        return click.prompt("Value", hide_input=True, err=True)
    text = sys.stdin.read()
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


@vault.command("get")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@global_options
@click.pass_obj
def get(state: CliState, vault_name: str, key: str):
    """Print a secret's value."""
    from swamp.vault.service import get_secret

    value = get_secret(state.repo(), vault_name, key)
    # The one place a secret is shown, on explicit request: printed directly,
    # not through the redacting output helpers.
    if state.json:
        click.echo(json.dumps({"vault": vault_name, "key": key, "value": value}, indent=2))
    else:
        click.echo(value)


@vault.command("list-keys")
@click.argument("vault_name", metavar="VAULT")
@global_options
@click.pass_obj
def list_keys(state: CliState, vault_name: str):
    """List the names of a vault's secrets (never their values)."""
    from swamp.vault.service import list_keys as keys_of

    keys = keys_of(state.repo(), vault_name)

    def human():
        for k in keys:
            say(k)

    emit(state, {"vault": vault_name, "keys": keys}, human)


@vault.command("delete")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@global_options
@click.pass_obj
def delete(state: CliState, vault_name: str, key: str, yes: bool):
    """Delete a secret."""
    from swamp.vault.service import delete_secret, get_vault

    repo = state.repo()
    if not get_vault(repo, vault_name).exists(key):
        from swamp.errors import NotFoundError

        raise NotFoundError(f"vault {vault_name!r} has no secret {key!r}")
    confirm(state, yes, f"Delete secret {key!r} from vault {vault_name!r}?")
    delete_secret(repo, vault_name, key)
    emit(state, {"vault": vault_name, "key": key, "deleted": True}, f"Deleted {key} from vault {vault_name}")
