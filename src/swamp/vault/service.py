"""Vaults of a repository: configs in git (`vaults/<type>/<name>.yaml`, no
secret material), secrets under `.swamp/secrets`. Every name is checked
before anything is read or written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from swamp.errors import NotFoundError, SwampError, ValidationError
from swamp.util import clock, documents, yamlio
from swamp.util.atomic import atomic_write
from swamp.util.names import did_you_mean
from swamp.vault.local import TYPE as LOCAL_ENCRYPTION
from swamp.vault.local import LocalEncryptionVault
from swamp.vault.names import check_key_name, check_vault_name
from swamp.vault.redact import register_secret

VAULT_TYPES = (LOCAL_ENCRYPTION,)
AUDIT_FILE = "audit.jsonl"


class VaultConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    type: Literal["local_encryption"]
    createdAt: str


def create_vault(repo, vault_type: str, name: str) -> dict:
    if vault_type not in VAULT_TYPES:
        raise ValidationError(f"unknown vault type {vault_type!r}",
                              hint=did_you_mean(vault_type, VAULT_TYPES) or f"types: {', '.join(VAULT_TYPES)}")
    check_vault_name(name)
    existing = _config_path(repo, name)
    if existing is not None:
        raise SwampError(f"vault {name!r} already exists ({_rel(repo, existing)})", code="exists")
    config = VaultConfig(name=name, type=vault_type, createdAt=clock.isoformat())
    LocalEncryptionVault(name, repo.secrets_dir).create()
    path = repo.vaults_dir / vault_type / f"{name}.yaml"
    atomic_write(path, yamlio.dumps(config.model_dump()))
    _audit(repo, "create", name)
    return {**config.model_dump(), "path": _rel(repo, path)}


def get_vault(repo, name: str) -> LocalEncryptionVault:
    return LocalEncryptionVault(_load_config(repo, name).name, repo.secrets_dir)


def list_vaults(repo) -> list[dict]:
    out = []
    for vault_type in VAULT_TYPES:
        for path in sorted((repo.vaults_dir / vault_type).glob("*.yaml")):
            config = _read_config(repo, path)
            out.append({**config.model_dump(), "path": _rel(repo, path)})
    return sorted(out, key=lambda v: v["name"])


def put_secret(repo, vault: str, key: str, value: str) -> dict:
    check_vault_name(vault)
    check_key_name(key)
    if not isinstance(value, str) or value == "":
        raise ValidationError("a secret value cannot be empty")
    overwritten = get_vault(repo, vault).put(key, value)
    _audit(repo, "put", vault, key)
    return {"vault": vault, "key": key, "overwritten": overwritten}


def get_secret(repo, vault: str, key: str) -> str:
    """The value, for the one place that shows it on request (`vault get`).
    Not registered with the redactor: showing it is the point."""
    check_key_name(key)
    return get_vault(repo, vault).get(key)


def list_keys(repo, vault: str) -> list[str]:
    return get_vault(repo, vault).list_keys()


def delete_secret(repo, vault: str, key: str) -> None:
    check_key_name(key)
    get_vault(repo, vault).delete(key)
    _audit(repo, "delete", vault, key)


class RepoVaults:
    """The VaultProvider for expressions and method runs: secrets of the
    repository's vaults, registered with the redactor as they are read."""

    def __init__(self, repo):
        self.repo = repo
        self._vaults: dict[str, LocalEncryptionVault] = {}
        # A worker holds no vault key: the dispatching side sends the values
        # one step needs, and they are its only vault (app/remote_steps.py).
        self._given: dict | None = getattr(repo, "given_secrets", None)

    def get(self, vault: str, key: str) -> str:
        if self._given is not None:
            if (vault, key) not in self._given:
                raise NotFoundError(f"secret {key!r} of vault {vault!r} was not sent with this step",
                                    hint="a worker only has the secrets the step's arguments referenced "
                                         "when it was dispatched")
            value = self._given[(vault, key)]
        else:
            value = self._vault(vault).get(key)
        register_secret(value)
        return value

    def exists(self, vault: str, key: str) -> bool:
        if self._given is not None:
            return (vault, key) in self._given
        return self._vault(vault).exists(key)

    def _vault(self, name: str) -> LocalEncryptionVault:
        if name not in self._vaults:
            self._vaults[name] = get_vault(self.repo, name)
        return self._vaults[name]


def _config_path(repo, name: str) -> Path | None:
    for vault_type in VAULT_TYPES:
        path = repo.vaults_dir / vault_type / f"{name}.yaml"
        if path.is_file():
            return path
    return None


def _load_config(repo, name: str) -> VaultConfig:
    check_vault_name(name)
    path = _config_path(repo, name)
    if path is None:
        names = [p.stem for t in VAULT_TYPES for p in (repo.vaults_dir / t).glob("*.yaml")]
        raise NotFoundError(f"no vault named {name!r}",
                            hint=did_you_mean(name, names) or f"swamp vault create local_encryption {name}")
    config = _read_config(repo, path)
    if config.name != name:
        raise ValidationError(f"{_rel(repo, path)}: name is {config.name!r}, expected {name!r}")
    return config


def _read_config(repo, path: Path) -> VaultConfig:
    rel = _rel(repo, path)
    config = documents.validate(VaultConfig, yamlio.load(path), rel)
    if path.parent.name != config.type:
        raise ValidationError(f"{rel}: type is {config.type!r} but the file is under {path.parent.name}/")
    return config


def _audit(repo, op: str, vault: str, key: str | None = None) -> None:
    # Who changed which secret, when; never a value. Appends are atomic for
    # lines this short.
    entry = {"at": clock.isoformat(), "op": op, "vault": vault}
    if key is not None:
        entry["key"] = key
    path = repo.secrets_dir / AUDIT_FILE
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, (json.dumps(entry) + "\n").encode())
    finally:
        os.close(fd)


def _rel(repo, path: Path) -> str:
    try:
        return str(path.relative_to(repo.root))
    except ValueError:
        return str(path)
