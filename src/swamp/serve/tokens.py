"""API tokens: ``NAME.SECRET``, shown once when minted, kept only as a
SHA-256 of the secret in ``.swamp/secrets/serve/tokens.json`` (mode 0600,
local to this machine like every secret). A token may name the user and
groups it acts for, so grants can name ``user:`` and ``group:`` subjects."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from swamp.errors import ConflictError, NotFoundError
from swamp.util import clock
from swamp.util.names import check_name


def store_path(repo) -> Path:
    return repo.secrets_dir / "serve" / "tokens.json"


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _load(repo) -> dict:
    try:
        return json.loads(store_path(repo).read_text())
    except FileNotFoundError:
        return {}


def _save(repo, tokens: dict) -> None:
    from swamp.util.atomic import atomic_write

    path = store_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    atomic_write(path, json.dumps(tokens, indent=2, sort_keys=True) + "\n", mode=0o600)


def _public(name: str, entry: dict) -> dict:
    return {"name": name, "user": entry.get("user"), "groups": entry.get("groups", []),
            "createdAt": entry["createdAt"], "revoked": entry.get("revoked", False)}


def mint(repo, name: str, *, user: str | None = None, groups: list[str] | None = None,
         replace: bool = False) -> dict:
    """A new token; the returned ``token`` is the only time its secret is seen."""
    check_name(name, "token name")
    tokens = _load(repo)
    if name in tokens and not tokens[name].get("revoked") and not replace:
        raise ConflictError(f"a token named {name!r} exists",
                            hint=f"rotate it with 'swamp access token rotate {name}', or revoke it first")
    secret = secrets.token_urlsafe(32)
    entry = {"sha256": _hash(secret), "createdAt": clock.isoformat()}
    if user:
        entry["user"] = user
    if groups:
        entry["groups"] = sorted(set(groups))
    tokens[name] = entry
    _save(repo, tokens)
    return {**_public(name, entry), "token": f"{name}.{secret}"}


def rotate(repo, name: str) -> dict:
    """A new secret for an existing token (same user and groups); the old one stops working."""
    old = _get(repo, name)
    return mint(repo, name, user=old.get("user"), groups=old.get("groups"), replace=True)


def revoke(repo, name: str) -> dict:
    tokens = _load(repo)
    if name not in tokens:
        raise NotFoundError(f"no token named {name!r}", hint="see them with 'swamp access token list'")
    tokens[name] = {**tokens[name], "revoked": True, "revokedAt": clock.isoformat()}
    tokens[name].pop("sha256", None)  # nothing left to match
    _save(repo, tokens)
    return _public(name, tokens[name])


def list_tokens(repo) -> list[dict]:
    return [_public(n, e) for n, e in sorted(_load(repo).items())]


def _get(repo, name: str) -> dict:
    entry = _load(repo).get(name)
    if entry is None or entry.get("revoked"):
        raise NotFoundError(f"no active token named {name!r}", hint="see them with 'swamp access token list'")
    return entry


def subjects_of(name: str, entry: dict) -> list[str]:
    out = [f"token:{name}"]
    if entry.get("user"):
        out.append(f"user:{entry['user']}")
    out += [f"group:{g}" for g in entry.get("groups", [])]
    return out


def subjects_for_name(repo, name: str) -> list[str]:
    """The subjects a named token acts as (for ``access can-i --token``)."""
    return subjects_of(name, _get(repo, name))


class TokenStore:
    """Checks bearer tokens, re-reading the file when it changed (a mint,
    rotate or revoke by ``swamp access`` takes effect on the next request)."""

    def __init__(self, repo) -> None:
        self.repo = repo
        self._path = store_path(repo)  # the same file for the process's life: built once, stat'ed per request
        self._stamp: tuple | None = None
        self._tokens: dict = {}

    def _fresh(self) -> dict:
        try:
            st = os.stat(self._path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._tokens = _load(self.repo)
            self._stamp = stamp
        return self._tokens

    def reload(self) -> dict:
        """Read the file again now (``swamp access reload``): ``{"tokens",
        "revoked"}``."""
        self._stamp = ("reload",)
        found = self._fresh()
        return {"tokens": sum(not e.get("revoked") for e in found.values()),
                "revoked": sum(bool(e.get("revoked")) for e in found.values())}

    def check(self, presented: str) -> tuple[str, list[str]] | None:
        """(token name, subjects) for a valid token, else None."""
        name, _, secret = presented.partition(".")
        entry = self._fresh().get(name)
        if not secret or entry is None or entry.get("revoked") or "sha256" not in entry:
            return None
        if not hmac.compare_digest(entry["sha256"], _hash(secret)):
            return None
        return name, subjects_of(name, entry)
