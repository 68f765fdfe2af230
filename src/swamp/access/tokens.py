"""API tokens: ``NAME.SECRET``, shown once when minted, kept only as a
SHA-256 of the secret. A token may name the user and groups it acts for,
so grants can name ``user:`` and ``group:`` subjects.

Where they live: on a shared datastore, in the datastore
(``access/tokens.json``, ``repo/access_docs.py``), so a token minted or
revoked on any checkout is honoured or refused by every serve replica;
otherwise in ``.swamp/secrets/serve/tokens.json`` (mode 0600, local to this
machine like every secret). A server honours both: a file made before the
datastore was shared keeps working on its machine, and a name in the
datastore wins over the same name in the file (so a revoke anywhere
refuses it).

This module is the rules and the machine's file: the hash, an entry's
shape, the subjects a token acts as, whether a presented token matches.
Minting, rotating and revoking (which may change the datastore's document
in a session) are app/access_tokens.py; what a server checks each request
against is app/enforced_access.py."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.util.names import check_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def store_path(repo: Repo) -> Path:
    return repo.secrets_dir / "serve" / "tokens.json"


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def load_file(repo: Repo) -> dict:
    try:
        return json.loads(store_path(repo).read_text())
    except FileNotFoundError:
        return {}


def check_entries(tokens: dict) -> None:
    """Never write a token that a server would misread."""
    from swamp.errors import ValidationError

    for name, entry in tokens.items():
        check_name(name, "token name")
        if not isinstance(entry.get("createdAt"), str) or not (entry.get("revoked") or isinstance(
                entry.get("sha256"), str)):
            raise ValidationError(f"token {name!r} would be written without its hash or creation time")


def save(repo: Repo, tokens: dict) -> None:
    from swamp.util.atomic import atomic_write

    path = store_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    atomic_write(path, json.dumps(tokens, indent=2, sort_keys=True) + "\n", mode=0o600)


def public(name: str, entry: dict) -> dict:
    return {"name": name, "user": entry.get("user"), "groups": entry.get("groups", []),
            "createdAt": entry["createdAt"], "revoked": entry.get("revoked", False)}


def subjects_of(name: str, entry: dict) -> list[str]:
    out = [f"token:{name}"]
    if entry.get("user"):
        out.append(f"user:{entry['user']}")
    out += [f"group:{g}" for g in entry.get("groups", [])]
    return out


def verify(tokens: dict, presented: str) -> tuple[str, list[str]] | None:
    """(token name, subjects) when ``presented`` is a valid token of ``tokens``, else None."""
    name, _, secret = presented.partition(".")
    entry = tokens.get(name)
    if not secret or entry is None or entry.get("revoked") or "sha256" not in entry:
        return None
    if not hmac.compare_digest(entry["sha256"], hash_secret(secret)):
        return None
    return name, subjects_of(name, entry)
