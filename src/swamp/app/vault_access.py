"""On whose behalf a run reads and writes vaults, as a front sets it: a
front that starts a run for a caller wraps the use case in
``acting_for(check)``, and the vault package asks ``check(action, vault)``
before it fetches any secret (the mechanism is vault/access.py; serve's
answers come from the caller's grants, serve/vault_grants.py)."""

from __future__ import annotations

from swamp.vault.access import VaultCheck, acting_for

__all__ = ["VaultCheck", "acting_for"]
