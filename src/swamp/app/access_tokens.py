"""Token use cases (``swamp access token mint|rotate|revoke|list``, and
the subjects a named token acts as): where a token lives, the machine's
file or the shared datastore's document, is the rule of access/tokens.py;
a change to the datastore's goes through app/access.py's session."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from swamp.access import tokens as token_rules
from swamp.errors import ConflictError, NotFoundError
from swamp.util import clock
from swamp.util.names import check_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def _shared(repo: Repo) -> bool:
    from swamp.app.access import shared

    return shared(repo)


def _load(repo: Repo) -> dict:
    """Every token this checkout knows: the file's, then the datastore's over them."""
    tokens = token_rules.load_file(repo)
    if _shared(repo):
        from swamp.app.access import read

        tokens.update(read(repo, "tokens"))
    return tokens


def _change(repo: Repo, name: str, command: str, edit):
    """Apply ``edit(tokens)`` where the token named ``name`` lives, and return its result."""
    if _shared(repo) and name not in token_rules.load_file(repo):
        from swamp.app.access import change

        return change(repo, "tokens", command, edit, token_rules.check_entries)
    tokens = token_rules.load_file(repo)
    result = edit(tokens)
    token_rules.check_entries(tokens)
    token_rules.save(repo, tokens)
    return result


def mint(repo: Repo, name: str, *, user: str | None = None, groups: list[str] | None = None,
         replace: bool = False) -> dict:
    """A new token; the returned ``token`` is the only time its secret is seen."""
    check_name(name, "token name")
    secret = secrets.token_urlsafe(32)
    entry = {"sha256": token_rules.hash_secret(secret), "createdAt": clock.isoformat()}
    if user:
        entry["user"] = user
    if groups:
        entry["groups"] = sorted(set(groups))

    def edit(tokens: dict) -> dict:
        if name in tokens and not tokens[name].get("revoked") and not replace:
            raise ConflictError(f"a token named {name!r} exists",
                                hint=f"rotate it with 'swamp access token rotate {name}', or revoke it first")
        tokens[name] = entry
        return token_rules.public(name, entry)

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
        return token_rules.public(name, tokens[name])

    return _change(repo, name, f"access token revoke {name}", edit)


def list_tokens(repo: Repo) -> list[dict]:
    return [token_rules.public(n, e) for n, e in sorted(_load(repo).items())]


def _get(repo: Repo, name: str) -> dict:
    entry = _load(repo).get(name)
    if entry is None or entry.get("revoked"):
        raise NotFoundError(f"no active token named {name!r}", hint="see them with 'swamp access token list'")
    return entry


def subjects_for_name(repo: Repo, name: str) -> list[str]:
    """The subjects a named token acts as (for ``access can-i --token``)."""
    return token_rules.subjects_of(name, _get(repo, name))
