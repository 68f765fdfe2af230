"""The vault types swamp knows: the builtin ones, then those that Python
packages installed beside swamp declare in the entry point group
``swamp.vault_types`` (the model types' group is ``swamp.model_types``),
then those registered in this process (``register``), then, given the
repository, those of its extensions: a local checkout added with
``extension source add``, or a pinned extension whose lockfile entry lists
the type under ``vaultTypes`` (installed on first use, the pinned wheels
only, hash-checked). A type nobody provides is an error whose hint says how
to find an extension that does.

An entry point names a ``VaultType`` instance, a class that builds one with
no arguments, or a module with a ``VAULT_TYPE``. Builtin types load only
when asked for, so naming one never imports its client library. A broken
extension never breaks swamp: its failure is reported and the others load."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swamp.errors import SwampError, ValidationError
from swamp.extensions.lockfile import is_shared
from swamp.extensions.runtime import load_pinned_vault_types, load_source_vault_types, pinned, sources, vault_provider
from swamp.util.names import did_you_mean
from swamp.vault.types import VaultType

if TYPE_CHECKING:
    from swamp.repo.context import Repo

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


def get_type(name: str, repo: Repo | None = None) -> VaultType:
    """The vault type ``name``; with ``repo``, its extensions are searched too."""
    if name in BUILTIN:
        return _load_ref(BUILTIN[name])
    if name in _registered:
        return _registered[name][0]
    loaded = _entry_points()
    if name in loaded.types:
        return loaded.types[name][0]
    if repo is not None:
        found = _from_extensions(repo, name)
        if found is not None:
            return found
    names = sorted(set(BUILTIN) | set(_registered) | set(loaded.types) | set(_pinned_names(repo)))
    hint = did_you_mean(name, names) or (f"types: {', '.join(names)}; an extension may provide it: "
                                         f"'swamp extension search {name.split('_')[0]}', then "
                                         "'swamp extension pull NAME'")
    if repo is not None and _is_shared(repo):
        hint += " (if a teammate pinned it, run 'swamp datastore sync' first)"
    raise ValidationError(f"unknown vault type {name!r}", hint=hint)


def all_types(repo: Repo | None = None) -> Loaded:
    """Every vault type (with ``repo``: its extensions' too, each pinned one
    installed if it is not yet), with its source."""
    loaded = _entry_points()
    out = Loaded(errors=list(loaded.errors))
    for name, ref in BUILTIN.items():
        out.types[name] = (_load_ref(ref), "builtin")
    extra = list(loaded.types.items())
    if repo is not None:
        ext = _extension_types(repo)
        out.errors += ext.errors
        extra += list(ext.types.items())
    for name, (t, source) in extra:
        if name in out.types:
            out.errors.append(f"{source}: vault type {name!r} is already provided by {out.types[name][1]}")
            continue
        out.types[name] = (t, source)
    for name, (t, source) in _registered.items():
        out.types.setdefault(name, (t, source))
    return out


def _is_shared(repo: Repo) -> bool:
    return is_shared(repo)


def _pinned_names(repo: Repo) -> list[str]:
    if repo is None:
        return []

    try:
        return sorted({t for e in pinned(repo).values() for t in e.vaultTypes})
    except SwampError:
        return []


def _from_extensions(repo: Repo, name: str) -> VaultType | None:
    """A local checkout's vault type, else the pinned extension's that lists it."""
    local = sources(repo)
    for ext, src in sorted(local.items()):  # read afresh: a checkout's types change as it is edited
        got = _collect(*_source_objects(src), f"source {src.get('path')}")
        if name in got.types:
            return got.types[name][0]
    found = vault_provider(repo, name)
    if found is None or found[0] in local:
        return None
    ext, entry = found
    source = f"extension {ext} {entry.version}"
    try:
        got = _collect(*load_pinned_vault_types(repo, ext, entry), source)
    except SwampError as e:
        raise SwampError(f"vault type {name!r} comes from {source}, which could not be installed: {e.message}",
                         code=e.code, hint=e.hint) from None
    if name in got.types:
        return got.types[name][0]
    raise ValidationError(f"vault type {name!r} comes from {source}, which failed to load it"
                          + (": " + "; ".join(got.errors) if got.errors else ""),
                          hint="fix or update the extension ('swamp extension update NAME'); "
                               "other vault types still work")


def _source_objects(src: dict) -> tuple[list, list]:
    return load_source_vault_types(src.get("path", ""))


def _extension_types(repo: Repo) -> Loaded:
    out = Loaded()
    try:
        local = sources(repo)
        for ext, src in sorted(local.items()):
            got = _collect(*_source_objects(src), f"source {src.get('path')}")
            out.errors += got.errors
            for n, v in got.types.items():
                out.types.setdefault(n, v)
        for ext, entry in sorted(pinned(repo).items()):
            if ext in local or not entry.vaultTypes:
                continue
            source = f"extension {ext} {entry.version}"
            try:
                got = _collect(*load_pinned_vault_types(repo, ext, entry), source)
            except SwampError as e:
                out.errors.append(f"{source}: {e.message}")
                continue
            out.errors += got.errors
            for n, v in got.types.items():
                out.types.setdefault(n, v)
    except SwampError as e:  # an unreadable lockfile: the other types still list
        out.errors.append(e.message)
    return out


def _collect(objects: list, failures: list, source: str) -> Loaded:
    out = Loaded(errors=[f"{source}: {f.file}" + (f":{f.line}" if f.line else "") + f": {f.message}"
                         for f in failures])
    for obj in objects:
        try:
            vt = as_vault_type(obj, source)
        except Exception as e:
            out.errors.append(f"{source}: {type(e).__name__}: {getattr(e, 'message', e)}")
            continue
        out.types[vt.name] = (vt, source)
    return out


def as_vault_type(obj, source: str) -> VaultType:
    """What an entry point names, as a vault type: an instance, a class that
    builds one with no arguments, or a module with a ``VAULT_TYPE``."""
    if isinstance(obj, type):
        obj = obj()
    elif not isinstance(obj, VaultType) and hasattr(obj, "VAULT_TYPE"):
        obj = obj.VAULT_TYPE
    _check_shape(obj, source)
    return obj


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
            obj = as_vault_type(ep.load(), source)
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
