"""What the type registries (model, report, vault) ask of the extensions:
which pinned extension provides a type (from the lockfile, importing
nothing), and its loaded entry points, installing it first on this machine
if it is pinned but not installed here (the pinned wheels only,
hash-checked)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import ExtensionError
from swamp.extensions import install, lockfile, sources as local_sources
from swamp.extensions.environment import VAULT_TYPES_GROUP, Failure, load, load_source as load_checkout
from swamp.extensions.lockfile import Entry

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def pinned(repo: Repo) -> dict[str, Entry]:
    return lockfile.read(repo).extensions


def provider(repo: Repo, type_name: str) -> tuple[str, Entry] | None:
    """The pinned extension that provides a model type (None: nobody pinned it)."""
    lock = lockfile.read(repo)
    return _the_one(lock, "model type", type_name, lock.provider_of(type_name))


def vault_provider(repo: Repo, type_name: str) -> tuple[str, Entry] | None:
    """The pinned extension that provides a vault type (None: nobody pinned it)."""
    lock = lockfile.read(repo)
    return _the_one(lock, "vault type", type_name, lock.vault_provider_of(type_name))


def _the_one(lock, kind: str, type_name: str, names: list[str]) -> tuple[str, Entry] | None:
    if not names:
        return None
    if len(names) > 1:
        raise ExtensionError(f"{kind} {type_name!r} is provided by more than one pinned extension: "
                             + ", ".join(names), hint="remove all but one: 'swamp extension rm NAME'")
    return names[0], lock.extensions[names[0]]


def load_pinned(repo: Repo, name: str, entry: Entry) -> tuple[list, list[Failure]]:
    """The objects its model and report entry points name (installing it
    first when needed; an extension that provides neither is not installed)."""
    if not entry.types and not entry.reportTypes and entry.vaultTypes:
        return [], []
    return load(install.ensure(repo, name, entry), name)


def load_pinned_vault_types(repo: Repo, name: str, entry: Entry) -> tuple[list, list[Failure]]:
    """The objects its ``swamp.vault_types`` entry points name (installing it
    first when needed)."""
    return load(install.ensure(repo, name, entry), name, (VAULT_TYPES_GROUP,))


def sources(repo: Repo) -> dict[str, dict]:
    return local_sources.read(repo)


def load_source(path: str) -> tuple[list, list[Failure]]:
    from pathlib import Path

    return load_checkout(Path(path))


def load_source_vault_types(path: str) -> tuple[list, list[Failure]]:
    from pathlib import Path

    return load_checkout(Path(path), (VAULT_TYPES_GROUP,))
