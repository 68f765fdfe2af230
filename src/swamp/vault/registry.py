"""The vault types swamp knows: the builtin ones, then those that Python
packages installed beside swamp declare in the entry point group
``swamp.vault_types`` (the model types' group is ``swamp.model_types``),
then those registered in this process (``register``).

An entry point names a ``VaultType`` instance, a class that builds one with
no arguments, or a module with a ``VAULT_TYPE``. Builtin types load only
when asked for, so naming one never imports its client library. A broken
extension never breaks swamp: its failure is reported and the others load."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field

from swamp.errors import ValidationError
from swamp.util.names import did_you_mean
from swamp.vault.types import VaultType

#: the entry point group extensions declare their vault types in
VAULT_TYPES_GROUP = "swamp.vault_types"

BUILTIN = {
    "aws_secrets_manager": "swamp.vault.aws:VAULT_TYPE",
    "local_encryption": "swamp.vault.local:VAULT_TYPE",
}

TYPE_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,62}$")

_registered: dict[str, tuple[VaultType, str]] = {}


@dataclass
class Loaded:
    types: dict[str, tuple[VaultType, str]] = field(default_factory=dict)  # name -> (type, source)
    errors: list[str] = field(default_factory=list)


def register(vault_type: VaultType, source: str = "registered") -> None:
    """Add a vault type in this process (tests, embedding)."""
    _check_shape(vault_type, source)
    _registered[vault_type.name] = (vault_type, source)


def unregister(name: str) -> None:
    _registered.pop(name, None)


def get_type(name: str) -> VaultType:
    if name in BUILTIN:
        return _load_ref(BUILTIN[name])
    if name in _registered:
        return _registered[name][0]
    loaded = _entry_points()
    if name in loaded.types:
        return loaded.types[name][0]
    names = sorted(set(BUILTIN) | set(_registered) | set(loaded.types))
    raise ValidationError(f"unknown vault type {name!r}",
                          hint=did_you_mean(name, names) or f"types: {', '.join(names)}")


def all_types() -> Loaded:
    loaded = _entry_points()
    out = Loaded(errors=list(loaded.errors))
    for name, ref in BUILTIN.items():
        out.types[name] = (_load_ref(ref), "builtin")
    for name, (t, source) in loaded.types.items():
        if name in out.types:
            out.errors.append(f"{source}: vault type {name!r} is already provided by {out.types[name][1]}")
            continue
        out.types[name] = (t, source)
    for name, (t, source) in _registered.items():
        out.types.setdefault(name, (t, source))
    return out


def _load_ref(ref: str) -> VaultType:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _entry_points() -> Loaded:
    import importlib.metadata

    out = Loaded()
    try:
        eps = importlib.metadata.entry_points(group=VAULT_TYPES_GROUP)
    except Exception as e:  # a broken installation must not break swamp
        out.errors.append(f"entry points: {e}")
        return out
    for ep in sorted(eps, key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        source = f"extension {dist.metadata['Name']} {dist.version}" if dist is not None else f"entry point {ep.name}"
        try:
            obj = ep.load()
            if isinstance(obj, type):
                obj = obj()
            elif not isinstance(obj, VaultType) and hasattr(obj, "VAULT_TYPE"):
                obj = obj.VAULT_TYPE
            _check_shape(obj, source)
        except Exception as e:
            out.errors.append(f"{source}: entry point {ep.name} = {ep.value}: {type(e).__name__}: {e}")
            continue
        out.types[obj.name] = (obj, source)
    return out


def _check_shape(obj, source: str) -> None:
    missing = [a for a in ("name", "description", "settings", "open", "check_settings", "describe")
               if not hasattr(obj, a)]
    if missing:
        raise ValidationError(f"{source}: not a vault type (it lacks {', '.join(missing)})",
                              hint="subclass swamp.vault.types.VaultType")
    if not isinstance(obj.name, str) or not TYPE_NAME_RE.match(obj.name):
        raise ValidationError(f"{source}: a vault type's name must match {TYPE_NAME_RE.pattern} "
                              f"(it names the directory vaults/<type>/)")
