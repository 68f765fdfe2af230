"""On whose behalf a run reads and writes vaults.

A run started by a caller of `swamp serve` (a token) evaluates the
definition's and workflow's ``vault.get(...)`` for that caller, so each
secret it fetches must be one the caller may read (``read`` on
``vault:NAME``). The vault package knows no grants: whoever starts the run
(serve) sets a check here for its duration (``acting_for``), and every
place a secret is taken out of or put into a vault during the run asks it
first (``require``, called by service.RepoVaults and put_secret) — before
the secret is fetched, so a refused run has nothing to leak.

No check set (the local CLI, a worker answering from the secrets sent with
its step, the server's own schedules and webhooks): nothing is asked, as
the process's user may read the vaults anyway.

The check lives in a context variable: a run's step threads carry it
because the engine starts them in a copy of the run's context
(util/tracing.carry)."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator

#: ``check(action, vault)``: returns if the run's caller may ``action``
#: ("read" or "write") on ``vault:VAULT``, raises a SwampError (code
#: ``forbidden``) naming what is missing otherwise
VaultCheck = Callable[[str, str], None]

_check: contextvars.ContextVar[VaultCheck | None] = contextvars.ContextVar("swamp_vault_check", default=None)


@contextlib.contextmanager
def acting_for(check: VaultCheck | None) -> Iterator[None]:
    """Vault access inside the block is decided by ``check`` (None: not
    checked, the process's own authority)."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def require(action: str, vault: str) -> None:
    """Ask the current run's check, if any, before touching ``vault``."""
    check = _check.get()
    if check is not None:
        check(action, vault)
