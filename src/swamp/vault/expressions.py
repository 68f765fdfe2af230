"""The `vault` namespace of expressions: `vault.get(VAULT, KEY)` evaluates to
a sentinel (sentinel.py), never to the secret, which replaces the sentinel
only when a method runs. With a provider, a missing secret fails during
evaluation rather than when the method runs."""

from __future__ import annotations

from typing import Protocol

from swamp.errors import NotFoundError
from swamp.expr import Function, Namespace
from swamp.vault.sentinel import make_sentinel


class VaultProvider(Protocol):
    """Secrets, for resolving sentinels when a method runs (``get``, which
    registers the value with the redactor before returning it) and for
    failing early on a missing secret during evaluation (``exists``)."""

    def get(self, vault: str, key: str) -> str: ...

    def exists(self, vault: str, key: str) -> bool: ...


def _get(provider: VaultProvider | None, vault: str, key: str) -> str:
    sentinel = make_sentinel(vault, key)
    if provider is not None and not provider.exists(vault, key):
        raise NotFoundError(f"vault {vault!r} has no secret {key!r}", hint=f"swamp vault put {vault} {key}")
    return sentinel


NAMESPACE = Namespace("vault", (Function("get", ("string", "string"), _get, returns="string",
                                         usage="vault.get(vault, key)"),))
