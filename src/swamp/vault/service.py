"""Vaults of a repository: configs in git (`vaults/<type>/<name>.yaml`, no
secret material), secrets under `.swamp/secrets`. Every name is checked
before anything is read or written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from swamp.errors import NotFoundError, SwampError, ValidationError
from swamp.util import clock, documents, yamlio
from swamp.util.names import did_you_mean
from swamp.vault import access, audit
from swamp.vault.names import check_key_name, check_vault_name
from swamp.vault.redact import register_secret
from swamp.vault.registry import get_type
from swamp.vault.types import Vault, length_class

if TYPE_CHECKING:
    from swamp.repo.context import Repo

AUDIT_FILE = audit.AUDIT_FILE
#: how many notes a key keeps, and how long one may be
NOTES_MAX = 20
NOTE_MAX = 500


class VaultConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    type: str
    createdAt: str
    settings: dict[str, str] = Field(default_factory=dict)

    def dump(self) -> dict:
        out = self.model_dump()
        if not out["settings"]:
            del out["settings"]
        return out


def create_vault(repo: Repo, vault_type: str, name: str, settings: dict | None = None) -> dict:
    vtype = get_type(vault_type, repo)
    check_vault_name(name)
    existing = _config_path(repo, name)
    if existing is not None:
        raise SwampError(f"vault {name!r} already exists ({_rel(repo, existing)})", code="exists")
    checked = vtype.check_settings(dict(settings or {}))
    config = VaultConfig(name=name, type=vtype.name, createdAt=clock.isoformat(), settings=checked)
    vtype.open(name, checked, repo.secrets_dir).create()
    path = repo.vaults_dir / vtype.name / f"{name}.yaml"
    repo.write_config(path, yamlio.dumps(config.dump()))  # the repository, or the config tier
    audit.record(repo.secrets_dir, "create", name, type=vtype.name)
    return {**config.dump(), "path": _rel(repo, path)}


def vault_config(repo: Repo, name: str) -> tuple[VaultConfig, Path]:
    config = _load_config(repo, name)
    return config, _config_path(repo, name)


def open_vault(repo: Repo, config: VaultConfig) -> Vault:
    vtype = get_type(config.type, repo)
    return vtype.open(config.name, vtype.check_settings(dict(config.settings)), repo.secrets_dir)


def get_vault(repo: Repo, name: str) -> Vault:
    return open_vault(repo, _load_config(repo, name))


def list_vaults(repo: Repo) -> list[dict]:
    out = []
    for path in _config_files(repo):
        config = _read_config(repo, path)
        out.append({**config.dump(), "path": _rel(repo, path)})
    return sorted(out, key=lambda v: v["name"])


def put_secret(repo: Repo, vault: str, key: str, value: str) -> dict:
    check_vault_name(vault)
    check_key_name(key)
    if not isinstance(value, str) or value == "":
        raise ValidationError("a secret value cannot be empty")
    access.require("write", vault)  # a run's caller (a method's sensitive output) writes only where allowed
    backend = get_vault(repo, vault)
    overwritten = backend.put(key, value)
    _touch_meta(backend, key, value, created=not overwritten)
    audit.record(repo.secrets_dir, "put", vault, key)
    return {"vault": vault, "key": key, "overwritten": overwritten}


def _touch_meta(backend: Vault, key: str, value: str, *, created: bool, extra: dict | None = None) -> None:
    now, who = clock.isoformat(), audit.who()
    meta = {} if created else backend.read_meta(key)
    if created:
        meta.update({"createdAt": now, "createdBy": who})
    meta.update({"updatedAt": now, "updatedBy": who, "lengthClass": length_class(value)})
    meta.update(extra or {})
    backend.write_meta(key, meta)


def get_secret(repo: Repo, vault: str, key: str) -> str:
    """The value, for the places that show it on request (`vault get`,
    `vault read-secret --reveal`). Not registered with the redactor:
    showing it is the point. Audited as a read."""
    check_key_name(key)
    access.require("read", vault)
    value = get_vault(repo, vault).get(key)
    audit.record(repo.secrets_dir, "read", vault, key)
    return value


def list_keys(repo: Repo, vault: str) -> list[str]:
    return get_vault(repo, vault).list_keys()


def delete_secret(repo: Repo, vault: str, key: str) -> None:
    check_key_name(key)
    access.require("write", vault)
    get_vault(repo, vault).delete(key)
    audit.record(repo.secrets_dir, "delete", vault, key)


def inspect_secret(repo: Repo, vault: str, key: str) -> dict:
    """What is known about a key, never its value."""
    check_key_name(key)
    config = _load_config(repo, vault)
    backend = open_vault(repo, config)
    if not backend.exists(key):
        raise NotFoundError(f"vault {vault!r} has no secret {key!r}",
                            hint=did_you_mean(key, backend.list_keys()) or f"swamp vault list-keys {vault}")
    meta = backend.read_meta(key)
    return {"vault": vault, "type": config.type, "key": key,
            "createdAt": meta.get("createdAt"), "createdBy": meta.get("createdBy"),
            "updatedAt": meta.get("updatedAt"), "updatedBy": meta.get("updatedBy"),
            "lengthClass": meta.get("lengthClass", "unknown (put before swamp recorded it)"),
            "notes": list(meta.get("notes") or [])}


def annotate_secret(repo: Repo, vault: str, key: str, note: str) -> dict:
    """Add a note (not secret) to a key's metadata."""
    check_key_name(key)
    if not isinstance(note, str) or not note.strip():
        raise ValidationError("a note cannot be empty")
    if len(note) > NOTE_MAX:
        raise ValidationError(f"a note has at most {NOTE_MAX} characters (this one has {len(note)})")
    backend = get_vault(repo, vault)
    if not backend.exists(key):
        raise NotFoundError(f"vault {vault!r} has no secret {key!r}",
                            hint=did_you_mean(key, backend.list_keys()) or f"swamp vault put {vault} {key}")
    meta = backend.read_meta(key)
    notes = list(meta.get("notes") or [])
    if len(notes) >= NOTES_MAX:
        raise ValidationError(f"{key!r} already has {NOTES_MAX} notes, the most a key keeps")
    entry = {"at": clock.isoformat(), "by": audit.who(), "note": note.strip()}
    notes.append(entry)
    meta["notes"] = notes
    backend.write_meta(key, meta)
    audit.record(repo.secrets_dir, "annotate", vault, key)
    return {"vault": vault, "key": key, "note": entry, "notes": len(notes)}


class RepoVaults:
    """The VaultProvider for expressions and method runs: secrets of the
    repository's vaults, registered with the redactor as they are read,
    each asked of the run's caller first (access.py)."""

    def __init__(self, repo: Repo):
        self.repo = repo
        self._vaults: dict[str, Vault] = {}
        # A worker holds no vault key: the dispatching side sends the values
        # one step needs, and they are its only vault (app/remote_steps.py).
        self._given: dict | None = getattr(repo, "given_secrets", None)

    def get(self, vault: str, key: str) -> str:
        access.require("read", vault)  # before anything is fetched: a refused run holds nothing
        if self._given is not None:
            if (vault, key) not in self._given:
                raise NotFoundError(f"secret {key!r} of vault {vault!r} was not sent with this step",
                                    hint="a worker only has the secrets the step's arguments referenced "
                                         "when it was dispatched")
            value = self._given[(vault, key)]
            register_secret(value)
            return value
        value = self._vault(vault).get(key)
        register_secret(value)  # first, so that nothing recorded after can carry it
        audit.record(self.repo.secrets_dir, "read", vault, key)
        return value

    def exists(self, vault: str, key: str) -> bool:
        access.require("read", vault)  # evaluating vault.get(): a refused run fails before it starts
        if self._given is not None:
            return (vault, key) in self._given
        return self._vault(vault).exists(key)

    def _vault(self, name: str) -> Vault:
        if name not in self._vaults:
            self._vaults[name] = get_vault(self.repo, name)
        return self._vaults[name]


def _config_files(repo: Repo) -> list[Path]:
    root = repo.vaults_dir
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("*/*.yaml") if p.is_file())


def _config_path(repo: Repo, name: str) -> Path | None:
    found = [p for p in _config_files(repo) if p.stem == name]
    if len(found) > 1:
        raise ValidationError(f"vault {name!r} is configured twice: "
                              + ", ".join(_rel(repo, p) for p in found), hint="remove one of the files")
    return found[0] if found else None


def _load_config(repo: Repo, name: str) -> VaultConfig:
    check_vault_name(name)
    path = _config_path(repo, name)
    if path is None:
        names = [p.stem for p in _config_files(repo)]
        raise NotFoundError(f"no vault named {name!r}",
                            hint=did_you_mean(name, names) or f"swamp vault create local_encryption {name}")
    config = _read_config(repo, path)
    if config.name != name:
        raise ValidationError(f"{_rel(repo, path)}: name is {config.name!r}, expected {name!r}")
    return config


def _read_config(repo: Repo, path: Path) -> VaultConfig:
    rel = _rel(repo, path)
    try:
        doc = yamlio.load(path)
    except FileNotFoundError:
        raise NotFoundError(f"{rel} is gone") from None
    config = documents.validate(VaultConfig, doc, rel)
    if path.parent.name != config.type:
        raise ValidationError(f"{rel}: type is {config.type!r} but the file is under {path.parent.name}/")
    return config


def check_config(repo: Repo, name: str) -> VaultConfig:
    """The config read and its type's settings checked (no network)."""
    config = _load_config(repo, name)
    rel = _rel(repo, _config_path(repo, name))
    try:
        get_type(config.type, repo).check_settings(dict(config.settings))
    except ValidationError as e:
        raise ValidationError(f"{rel}: {e.message}", hint=e.hint) from None
    return config


def _rel(repo: Repo, path: Path) -> str:
    try:
        return str(path.relative_to(repo.root))
    except ValueError:
        return str(path)
