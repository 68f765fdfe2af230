"""The vault-type contract: what a kind of vault implements so that swamp can
keep secrets in it (docs/vaults.md says the same for extension writers).

A vault type is a ``VaultType``: a name, a description, the settings its
vault configs take (``vaults/<type>/<name>.yaml``, in git, so never secret
material), and ``open``, which returns a ``Vault`` for one configured vault.

A ``Vault`` stores string values under key names (``names.KEY_RE``) and,
beside each key, a small JSON map of metadata that is not secret (who put
it and when, notes, the value's length class). Every method raises a
``SwampError`` for a failure a user can meet (a ``NotFoundError`` for a
missing key), never a bare exception, and no message carries a value.

swamp does the rest: it checks names before a vault sees them, writes the
audit log, keeps values out of every output (redaction), and resolves
``${{ vault.get(...) }}`` only when a method runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from swamp.errors import ValidationError


@dataclass(frozen=True)
class Setting:
    """One setting of a vault config (a string)."""

    name: str
    description: str
    required: bool = False
    default: str | None = None


@runtime_checkable
class Vault(Protocol):
    name: str

    def create(self) -> None:
        """Prepare the vault (`vault create`); keep what already exists."""

    def check(self) -> None:
        """Raise a SwampError when the vault cannot be used (unreachable,
        no credentials, no key); `vault validate` and `vault describe`."""

    def location(self) -> str:
        """Where the secrets live, for people (a path, an ARN prefix)."""

    def put(self, key: str, value: str) -> bool:
        """Store ``value``; True when it replaced one."""

    def get(self, key: str) -> str:
        """The value; NotFoundError when there is none."""

    def exists(self, key: str) -> bool: ...

    def list_keys(self) -> list[str]:
        """The key names, sorted."""

    def delete(self, key: str) -> None:
        """Remove the value and its metadata; NotFoundError when absent."""

    def read_meta(self, key: str) -> dict:
        """The key's metadata ({} when none was stored)."""

    def write_meta(self, key: str, meta: dict) -> None:
        """Replace the key's metadata (the key exists)."""


class VaultType:
    """Subclass this (or build an object with the same attributes) and
    register it: builtin, or an entry point in the ``swamp.vault_types``
    group (registry.py)."""

    name: str = ""
    description: str = ""
    settings: tuple[Setting, ...] = ()

    def check_settings(self, settings: dict) -> dict:
        """The settings with defaults filled in; unknown or missing ones
        refused with the names that are accepted."""
        known = {s.name: s for s in self.settings}
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValidationError(
                f"vault type {self.name!r} has no setting {unknown[0]!r}",
                hint=("its settings: " + ", ".join(sorted(known))) if known else f"{self.name} takes no settings")
        out = {}
        for s in self.settings:
            value = settings.get(s.name, s.default)
            if value is None:
                if s.required:
                    raise ValidationError(f"vault type {self.name!r} needs the setting {s.name!r} ({s.description})",
                                          hint=f"pass --set {s.name}=VALUE")
                continue
            if not isinstance(value, str):
                raise ValidationError(f"setting {s.name!r} of a {self.name} vault must be a string")
            out[s.name] = value
        return out

    def open(self, name: str, settings: dict, secrets_dir: Path) -> Vault:  # pragma: no cover - contract
        raise NotImplementedError

    def describe(self) -> dict:
        return {"type": self.name, "description": self.description,
                "settings": [{"name": s.name, "description": s.description, "required": s.required,
                              "default": s.default} for s in self.settings]}


# Length classes: what `vault inspect` says of a value's size, never more.
_CLASSES = ((16, "short (under 16 characters)"), (64, "medium (16-63 characters)"),
            (256, "long (64-255 characters)"))


def length_class(value: str) -> str:
    n = len(value)
    for bound, label in _CLASSES:
        if n < bound:
            return label
    return "very long (256 characters or more)"
