"""Sensitive resource fields: their values go into a vault and the data
keeps only a vault reference, so a secret a method learns (a password it
generated, a token an API returned) is never persisted in clear."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from swamp.errors import SwampError

if TYPE_CHECKING:
    from swamp.repo.context import Repo

REF_RE = re.compile(r"^\$\{\{ vault\.get\('([a-z0-9][a-z0-9_-]*)', '([A-Za-z0-9][A-Za-z0-9._-]*)'\) \}\}$")


def sensitive_fields(spec) -> set[str]:
    """Top-level fields marked ``Field(json_schema_extra={"sensitive": True})``,
    or every field when the whole resource is declared sensitive."""
    lazy = getattr(spec, "lazy", None)
    if lazy is not None:  # a built-in's schema declares them in its fast-path table
        return set(lazy.fields) if spec.sensitive else lazy.sensitive
    if spec.schema is None:
        return set()
    if spec.sensitive:
        return set(spec.schema.model_fields)
    out = set()
    for name, f in spec.schema.model_fields.items():
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        if extra.get("sensitive"):
            out.add(f.alias or name)
    return out


def _default_vault(repo: Repo) -> str:
    from swamp.vault.service import list_vaults

    if repo.config.defaultVault:
        return repo.config.defaultVault
    vaults = list_vaults(repo)
    if not vaults:
        raise SwampError("this resource has sensitive fields, and the repository has no vault to keep them in",
                         code="no_vault", hint="create one: swamp vault create local_encryption main")
    return vaults[0]["name"]


def store_sensitive(repo: Repo, data: dict, fields: set[str], key_prefix: str) -> dict:
    """A copy of ``data`` whose sensitive values live in a vault."""
    if not fields:
        return data
    from swamp.vault.redact import register_secret
    from swamp.vault.service import put_secret

    vault = _default_vault(repo)
    out = dict(data)
    for name in sorted(fields):
        value = out.get(name)
        if value is None:
            continue
        secret = value if isinstance(value, str) else json.dumps(value)
        register_secret(secret)
        key = f"{key_prefix}-{name}"
        put_secret(repo, vault, key, secret)
        out[name] = f"${{{{ vault.get('{vault}', '{key}') }}}}"
    return out


def reveal(repo: Repo, data: Any) -> Any:
    """Resolve vault references in data read back by a method."""
    if not isinstance(data, dict):
        return data
    from swamp.vault.service import RepoVaults

    vaults = None
    out = dict(data)
    for k, v in data.items():
        m = REF_RE.match(v) if isinstance(v, str) else None
        if m:
            vaults = vaults or RepoVaults(repo)
            out[k] = vaults.get(m.group(1), m.group(2))
    return out
