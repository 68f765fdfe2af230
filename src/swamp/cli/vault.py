from __future__ import annotations

import json
import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, emit_validation, open_in_editor, say, table

HISTORY_WARNING = ("the value was given on the command line, where your shell history keeps it; "
                   "omit it to be prompted, or pipe it on stdin")


@click.group()
def vault():
    """Secrets, injected late and never written in clear.

    Example: swamp vault list-keys prod"""


def _settings(pairs: tuple[str, ...]) -> dict:
    from swamp.errors import UsageError

    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--set takes NAME=VALUE, not {pair!r}")
        out[name] = value
    return out


@vault.command("create")
@click.argument("vault_type", metavar="TYPE")
@click.argument("name")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="A setting of the vault type (see 'swamp vault type search').")
@global_options
@click.pass_obj
def create(state: CliState, vault_type: str, name: str, settings: tuple[str, ...]):
    """Create vault NAME of TYPE (local_encryption, aws_secrets_manager, or an extension's).

    Example: swamp vault create aws_secrets_manager prod --set region=eu-west-1"""
    from swamp.app.managed_config import create_vault

    result = create_vault(state.repo(), vault_type, name, _settings(settings))
    emit(state, result, f"Created vault {result['name']} ({result['type']}) in {result['path']}")


@vault.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """List the repository's vaults.

    Example: swamp vault list"""
    from swamp.app.vaults import search as search_vaults

    vaults = search_vaults(state.repo())
    emit(state, vaults, lambda: table(vaults, ["name", "type", "createdAt"]))


@vault.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def search(state: CliState, query: str | None):
    """List the vaults whose name or type contains QUERY (all without one).

    Example: swamp vault search prod"""
    from swamp.app.vaults import search as search_vaults

    vaults = search_vaults(state.repo(), query)
    emit(state, vaults, lambda: table(vaults, ["name", "type", "createdAt", "path"]))


@vault.command("describe")
@click.argument("name")
@global_options
@click.pass_obj
def describe(state: CliState, name: str):
    """Show a vault: its config, type, where its secrets live and its key names.

    Example: swamp vault describe prod"""
    from swamp.app.vaults import describe as describe_vault

    d = describe_vault(state.repo(), name)

    def human():
        say(f"{d['name']}  ({d['type']})")
        say(f"  config:   {d['path']}")
        say(f"  created:  {d['createdAt']}")
        for k, v in d["settings"].items():
            say(f"  {k}: {v}")
        if d.get("location"):
            say(f"  location: {d['location']}")
        if d["reachable"]:
            say(f"  keys ({d['keyCount']}): {', '.join(d['keys']) if d['keys'] else '-'}")
        else:
            say(f"  not reachable: {d['problem']}")
            if d.get("hint"):
                say(f"  hint: {d['hint']}")

    emit(state, d, human)


@vault.command("validate")
@click.argument("name", required=False)
@global_options
@click.pass_obj
def validate(state: CliState, name: str | None):
    """Check vault configs (NAME, or all) and that each vault opens.

    Example: swamp vault validate prod"""
    from swamp.app.vaults import validate as validate_vaults

    emit_validation(state, validate_vaults(state.repo(), name), "vaults")


@vault.command("edit")
@click.argument("name")
@global_options
@click.pass_obj
def edit(state: CliState, name: str):
    """Open a vault's config in $EDITOR, then check it.

    Example: EDITOR=vi swamp vault edit prod"""
    from swamp.app.vaults import config_path
    from swamp.app.vaults import validate as validate_vaults

    repo = state.repo()
    path = config_path(repo, name)
    open_in_editor(state, path, "vault", name, managed=repo.managed_config)
    from swamp.app.managed_config import publish_edit

    result = validate_vaults(repo, name)
    if result["valid"]:
        publish_edit(repo, "vault", name, path)  # managed config: publish it (only once it is valid)
    emit_validation(state, result, "vaults")


@vault.command("put")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@click.argument("value", required=False)
@global_options
@click.pass_obj
def put(state: CliState, vault_name: str, key: str, value: str | None):
    """Store a secret. Without VALUE it is read from stdin (one trailing
    newline dropped) or, on a terminal, from a hidden prompt, which keeps it
    out of shell history; a VALUE given here is stored with a warning.

    Example: printf %s "$TOKEN" | swamp vault put prod api.token"""
    from swamp.app.vaults import check_put
    from swamp.app.vaults import put as put_secret

    repo = state.repo()
    check_put(repo, vault_name, key)  # refuse bad names and unknown vaults before asking for the value
    warnings = []
    if value is None:
        value = _read_value()
    else:
        warnings.append(HISTORY_WARNING)
        if not state.json:
            say(f"warning: {HISTORY_WARNING}", err=True)
    result = put_secret(repo, vault_name, key, value)
    verb = "Replaced" if result["overwritten"] else "Stored"
    emit(state, {**result, **({"warnings": warnings} if warnings else {})}, f"{verb} {key} in vault {vault_name}")


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
    """Print a secret's value (audited as a read; scripts: 'vault read-secret --reveal').

    Example: swamp vault get prod api.token"""
    from swamp.app.vaults import read_secret

    value = read_secret(state.repo(), vault_name, key, via="vault get")
    # The one place a secret is shown, on explicit request: printed directly,
    # not through the redacting output helpers.
    if state.json:
        click.echo(json.dumps({"vault": vault_name, "key": key, "value": value}, indent=2))
    else:
        click.echo(value)


@vault.command("read-secret")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@click.option("--reveal", is_flag=True, help="Print the value; without it nothing is read.")
@global_options
@click.pass_obj
def read_secret_cmd(state: CliState, vault_name: str, key: str, reveal: bool):
    """Print a secret's value exactly (no newline added), for scripts; only with --reveal.

    Example: TOKEN=$(swamp vault read-secret prod api.token --reveal)"""
    from swamp.app.vaults import read_secret
    from swamp.errors import UsageError

    if not reveal:
        raise UsageError("vault read-secret prints a secret only with --reveal",
                         hint=f"swamp vault read-secret {vault_name} {key} --reveal "
                              f"(or 'swamp vault inspect {vault_name} {key}' for what is known without the value)")
    value = read_secret(state.repo(), vault_name, key)
    if state.json:
        click.echo(json.dumps({"vault": vault_name, "key": key, "value": value}, indent=2))
    else:
        sys.stdout.write(value)
        sys.stdout.flush()


@vault.command("list-keys")
@click.argument("vault_name", metavar="VAULT")
@global_options
@click.pass_obj
def list_keys(state: CliState, vault_name: str):
    """List the names of a vault's secrets (never their values).

    Example: swamp vault list-keys prod"""
    from swamp.app.vaults import list_keys as keys_of

    keys = keys_of(state.repo(), vault_name)

    def human():
        for k in keys:
            say(k)

    emit(state, {"vault": vault_name, "keys": keys}, human)


@vault.command("inspect")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@global_options
@click.pass_obj
def inspect(state: CliState, vault_name: str, key: str):
    """What is known about a secret: created and updated (when, by whom), its
    notes and its length class; never its value.

    Example: swamp vault inspect prod api.token"""
    from swamp.app.vaults import inspect as inspect_secret

    d = inspect_secret(state.repo(), vault_name, key)

    def human():
        say(f"{d['key']}  (vault {d['vault']}, {d['type']})")
        say(f"  created: {d['createdAt'] or '-'} by {d['createdBy'] or '-'}")
        say(f"  updated: {d['updatedAt'] or '-'} by {d['updatedBy'] or '-'}")
        say(f"  length:  {d['lengthClass']}")
        for n in d["notes"]:
            say(f"  note:    {n.get('note')}  ({n.get('by')}, {n.get('at')})")

    emit(state, d, human)


@vault.command("annotate")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@click.argument("note")
@global_options
@click.pass_obj
def annotate(state: CliState, vault_name: str, key: str, note: str):
    """Add a note to a secret (kept beside it, not secret; 'vault inspect' shows it).

    Example: swamp vault annotate prod api.token "rotate every 90 days; owner: ops"""
    from swamp.app.vaults import annotate as annotate_secret

    result = annotate_secret(state.repo(), vault_name, key, note)
    emit(state, result, f"Noted on {key} in vault {vault_name} ({result['notes']} note(s))")


@vault.command("audit-trail")
@click.argument("vault_name", metavar="[VAULT]", required=False)
@click.option("--key", help="Only this key's events.")
@click.option("--limit", type=int, help="Only the last N events.")
@global_options
@click.pass_obj
def audit_trail(state: CliState, vault_name: str | None, key: str | None, limit: int | None):
    """Who read or changed which secret, when and through which command
    (method and workflow runs included), oldest first; never a value.

    Example: swamp vault audit-trail prod --key api.token"""
    from swamp.app.vaults import audit_trail as trail

    result = trail(state.repo(), vault_name, key, limit=limit)
    events = result["events"]

    def human():
        rows = [{**e, "key": e.get("key", "-")} for e in events]
        table(rows, ["at", "by", "op", "vault", "key", "via"])
        if result["unreadableLines"]:
            say(f"warning: {result['unreadableLines']} line(s) of the audit log are not readable", err=True)

    emit(state, result, human)


@vault.command("delete")
@click.argument("vault_name", metavar="VAULT")
@click.argument("key")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@global_options
@click.pass_obj
def delete(state: CliState, vault_name: str, key: str, yes: bool):
    """Delete a secret.

    Example: swamp vault delete prod api.token -y"""
    from swamp.app.vaults import delete as delete_secret
    from swamp.app.vaults import exists

    repo = state.repo()
    if not exists(repo, vault_name, key):
        from swamp.errors import NotFoundError

        raise NotFoundError(f"vault {vault_name!r} has no secret {key!r}")
    confirm(state, yes, f"Delete secret {key!r} from vault {vault_name!r}?")
    result = delete_secret(repo, vault_name, key)
    emit(state, result, f"Deleted {key} from vault {vault_name}")


@vault.command("migrate")
@click.argument("source", metavar="FROM")
@click.argument("dest", metavar="TO")
@click.option("--keys", "keys", multiple=True, metavar="KEY",
              help="Move only these keys (repeat, or separate with commas); default: all.")
@global_options
@click.pass_obj
def migrate(state: CliState, source: str, dest: str, keys: tuple[str, ...]):
    """Move secrets from vault FROM to vault TO: copy each, read every copy
    back and compare, and only then remove them from FROM. On a failure
    nothing is removed from FROM and the copies made are taken back.

    Example: swamp vault migrate local-prod aws-prod --keys api.token,DB_PASS"""
    from swamp.app.vaults import migrate as migrate_vaults

    wanted = [k.strip() for item in keys for k in item.split(",") if k.strip()]
    result = migrate_vaults(state.repo(), source, dest, wanted or None)
    emit(state, result, f"Moved {len(result['moved'])} secret(s) from {source} to {dest}, each verified"
                        + (f": {', '.join(result['moved'])}" if result["moved"] else ""))


@vault.group("type")
def vault_type():
    """Kinds of vault: builtin, and those extensions add.

    Example: swamp vault type search local"""


@vault_type.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def type_search(state: CliState, query: str | None):
    """List vault types (name or description containing QUERY), with their settings.

    Example: swamp vault type search aws"""
    from swamp.app.vaults import type_search as search_types
    from swamp.errors import SwampError

    try:
        repo = state.repo()
    except SwampError:  # outside a repository: the types of swamp's own environment
        repo = None
    result = search_types(query, repo)
    if not state.json:
        for err in result["errors"]:
            say(f"warning: {err}", err=True)

    def human():
        rows = [{**t, "settings": ", ".join(s["name"] for s in t["settings"]) or "-"} for t in result["types"]]
        table(rows, ["type", "source", "settings", "description"])

    emit(state, result, human)


# upstream's other name (cli/aliases.py)
from swamp.cli.aliases import hidden_alias  # noqa: E402

hidden_alias(vault_type, type_search, "list")
