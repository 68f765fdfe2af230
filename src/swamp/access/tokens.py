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
refuses it)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import ConflictError, NotFoundError, SwampError
from swamp.util import clock
from swamp.util.names import check_name

if TYPE_CHECKING:
    from swamp.app.repository import Repo


def store_path(repo: Repo) -> Path:
    return repo.secrets_dir / "serve" / "tokens.json"


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _load_file(repo: Repo) -> dict:
    try:
        return json.loads(store_path(repo).read_text())
    except FileNotFoundError:
        return {}


def _shared(repo: Repo) -> bool:
    from swamp.app.access import shared

    return shared(repo)


def _load(repo: Repo) -> dict:
    """Every token this checkout knows: the file's, then the datastore's over them."""
    tokens = _load_file(repo)
    if _shared(repo):
        from swamp.app.access import read

        tokens.update(read(repo, "tokens"))
    return tokens


def _change(repo: Repo, name: str, command: str, edit):
    """Apply ``edit(tokens)`` where the token named ``name`` lives, and return its result."""
    if _shared(repo) and name not in _load_file(repo):
        from swamp.app.access import change

        return change(repo, "tokens", command, edit, _check_entries)
    tokens = _load_file(repo)
    result = edit(tokens)
    _check_entries(tokens)
    _save(repo, tokens)
    return result


def _check_entries(tokens: dict) -> None:
    """Never write a token that a server would misread."""
    from swamp.errors import ValidationError

    for name, entry in tokens.items():
        check_name(name, "token name")
        if not isinstance(entry.get("createdAt"), str) or not (entry.get("revoked") or isinstance(
                entry.get("sha256"), str)):
            raise ValidationError(f"token {name!r} would be written without its hash or creation time")


def _save(repo: Repo, tokens: dict) -> None:
    from swamp.util.atomic import atomic_write

    path = store_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    atomic_write(path, json.dumps(tokens, indent=2, sort_keys=True) + "\n", mode=0o600)


def _public(name: str, entry: dict) -> dict:
    return {"name": name, "user": entry.get("user"), "groups": entry.get("groups", []),
            "createdAt": entry["createdAt"], "revoked": entry.get("revoked", False)}


def mint(repo: Repo, name: str, *, user: str | None = None, groups: list[str] | None = None,
         replace: bool = False) -> dict:
    """A new token; the returned ``token`` is the only time its secret is seen."""
    check_name(name, "token name")
    secret = secrets.token_urlsafe(32)
    entry = {"sha256": _hash(secret), "createdAt": clock.isoformat()}
    if user:
        entry["user"] = user
    if groups:
        entry["groups"] = sorted(set(groups))

    def edit(tokens: dict) -> dict:
        if name in tokens and not tokens[name].get("revoked") and not replace:
            raise ConflictError(f"a token named {name!r} exists",
                                hint=f"rotate it with 'swamp access token rotate {name}', or revoke it first")
        tokens[name] = entry
        return _public(name, entry)

    verb = "rotate" if replace else "mint"
    return {**_change(repo, name, f"access token {verb} {name}", edit), "token": f"{name}.{secret}"}


def rotate(repo: Repo, name: str) -> dict:
    """A new secret for an existing token (same user and groups); the old one stops working."""
    old = _get(repo, name)
    return mint(repo, name, user=old.get("user"), groups=old.get("groups"), replace=True)


def revoke(repo: Repo, name: str) -> dict:
    def edit(tokens: dict) -> dict:
        if name not in tokens:
            raise NotFoundError(f"no token named {name!r}", hint="see them with 'swamp access token list'")
        tokens[name] = {**tokens[name], "revoked": True, "revokedAt": clock.isoformat()}
        tokens[name].pop("sha256", None)  # nothing left to match
        return _public(name, tokens[name])

    return _change(repo, name, f"access token revoke {name}", edit)


def list_tokens(repo: Repo) -> list[dict]:
    return [_public(n, e) for n, e in sorted(_load(repo).items())]


def _get(repo: Repo, name: str) -> dict:
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


def subjects_for_name(repo: Repo, name: str) -> list[str]:
    """The subjects a named token acts as (for ``access can-i --token``)."""
    return subjects_of(name, _get(repo, name))


class TokenStore:
    """Checks bearer tokens, re-reading the file when it changed (a mint,
    rotate or revoke by ``swamp access`` takes effect on the next request)."""

    def __init__(self, repo: Repo) -> None:
        from swamp.serve.access_state import SharedDoc

        self.repo = repo
        self._path = store_path(repo)  # the same file for the process's life: built once, stat'ed per request
        self._stamp: tuple | None = None
        self._tokens: dict = {}
        self._shared = SharedDoc(repo, "tokens") if _shared(repo) else None

    def _fresh(self) -> dict:
        try:
            st = os.stat(self._path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._tokens = _load_file(self.repo)
            self._stamp = stamp
        if self._shared is None:
            return self._tokens
        try:
            shared = self._shared.current()
        except SwampError as e:
            from swamp.access.grants import broken

            raise broken(e, "tokens") from None
        return {**self._tokens, **shared}

    def reload(self) -> dict:
        """Read the file and the datastore's tokens again now (``swamp
        access reload``): ``{"tokens", "revoked"}``."""
        self._stamp = ("reload",)
        if self._shared is not None:
            from swamp.app.lifecycle import refresh

            refresh(self.repo)
            self._shared.forget()
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
