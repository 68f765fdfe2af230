"""Vault administration, one function per use case (`swamp vault ...`).

None of these opens a datastore session: vault configs are files in git
(`vaults/<type>/<name>.yaml`), the secrets live in the vault itself (this
machine's `.swamp/secrets`, or a secret manager), and so does the audit log
(`.swamp/secrets/audit.jsonl`). A vault command therefore works while the
datastore is unreachable. Each use case names itself to the audit log
(``audit.acting``), and no result ever carries a value except
``read_secret``'s, which the caller asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import ConflictError, NotFoundError, SwampError, ValidationError, VaultMigrationError
from swamp.util import clock
from swamp.util.names import did_you_mean
from swamp.vault import audit, service
from swamp.vault.names import check_key_name, check_vault_name
from swamp.vault.redact import register_secret
from swamp.vault.registry import all_types, get_type

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def create(repo: Repo, vault_type: str, name: str, settings: dict | None = None) -> dict:
    with audit.acting("vault create"):
        return service.create_vault(repo, vault_type, name, settings)


def search(repo: Repo, query: str | None = None) -> list[dict]:
    """Vaults whose name or type contains ``query`` (any case), by name."""
    vaults = service.list_vaults(repo)
    if query:
        q = query.lower()
        vaults = [v for v in vaults if q in v["name"].lower() or q in v["type"].lower()]
    return vaults


def describe(repo: Repo, name: str) -> dict:
    """The vault's config, its type, where its secrets live and its keys.
    A vault that cannot be reached is described all the same, with why."""
    config, path = service.vault_config(repo, name)
    vtype = get_type(config.type, repo)
    out = {"name": config.name, "type": config.type, "createdAt": config.createdAt,
           "path": service._rel(repo, path), "settings": dict(sorted(config.settings.items())),
           "typeDescription": vtype.description}
    try:
        backend = service.open_vault(repo, config)
        out["location"] = backend.location()
        keys = backend.list_keys()
        out.update({"reachable": True, "keys": keys, "keyCount": len(keys)})
    except SwampError as e:
        out.update({"reachable": False, "problem": e.message, "hint": e.hint, "keys": [], "keyCount": None})
    return out


def validate(repo: Repo, name: str | None = None) -> dict:
    """Each vault's config read and checked, and the vault opened."""
    names = [name] if name is not None else [v["name"] for v in _configs_lenient(repo)]
    entries = []
    for n in names:
        errors = []
        try:
            config = service.check_config(repo, n)
            service.open_vault(repo, config).check()
        except NotFoundError:
            if name is not None:
                raise
            errors.append(f"no vault named {n!r}")
        except SwampError as e:
            errors.append(e.message + (f" ({e.hint})" if e.hint else ""))
        entries.append({"name": n, "valid": not errors, "errors": errors})
    return {"valid": all(e["valid"] for e in entries), "vaults": entries}


def _configs_lenient(repo: Repo) -> list[dict]:
    # Names from the file names, so one broken config does not hide the others.
    root = repo.vaults_dir
    files = sorted(root.glob("*/*.yaml")) if root.is_dir() else []
    return [{"name": p.stem} for p in files]


def config_path(repo: Repo, name: str):
    """The file `vault edit` opens."""
    return service.vault_config(repo, name)[1]


def put(repo: Repo, vault: str, key: str, value: str) -> dict:
    with audit.acting("vault put"):
        return service.put_secret(repo, vault, key, value)


def check_put(repo: Repo, vault: str, key: str) -> None:
    """Refuse a put before its value is asked for: bad names, unknown vault."""
    check_vault_name(vault)
    check_key_name(key)
    service.vault_config(repo, vault)


def read_secret(repo: Repo, vault: str, key: str, *, via: str = "vault read-secret") -> str:
    with audit.acting(via):
        return service.get_secret(repo, vault, key)


def list_keys(repo: Repo, vault: str) -> list[str]:
    return service.list_keys(repo, vault)


def delete(repo: Repo, vault: str, key: str) -> dict:
    with audit.acting("vault delete"):
        service.delete_secret(repo, vault, key)
    return {"vault": vault, "key": key, "deleted": True}


def exists(repo: Repo, vault: str, key: str) -> bool:
    check_key_name(key)
    return service.get_vault(repo, vault).exists(key)


def inspect(repo: Repo, vault: str, key: str) -> dict:
    return service.inspect_secret(repo, vault, key)


def annotate(repo: Repo, vault: str, key: str, note: str) -> dict:
    with audit.acting("vault annotate"):
        return service.annotate_secret(repo, vault, key, note)


def audit_trail(repo: Repo, vault: str | None = None, key: str | None = None, *, limit: int | None = None) -> dict:
    """Who read or changed which key, oldest first; never a value. A vault
    no longer configured still has its trail."""
    if vault is not None:
        check_vault_name(vault)
    if key is not None:
        check_key_name(key)
    events, unreadable = audit.read(repo.secrets_dir, vault, key)
    if vault is not None and not events:
        known = {v["name"] for v in _configs_lenient(repo)}
        if vault not in known:
            raise NotFoundError(f"no vault named {vault!r}, and the audit log names none",
                                hint=did_you_mean(vault, sorted(known)) or "swamp vault list")
    if limit is not None:
        if limit < 1:
            raise ValidationError("--limit must be at least 1")
        events = events[-limit:]
    return {"events": events, "unreadableLines": unreadable}


def type_search(query: str | None = None, repo: Repo | None = None) -> dict:
    """With ``repo``: its extensions' vault types too (pinned ones installed first)."""
    loaded = all_types(repo)
    out = []
    for name, (vtype, source) in sorted(loaded.types.items()):
        entry = {**vtype.describe(), "source": source}
        if query and query.lower() not in (name + " " + vtype.description).lower():
            continue
        out.append(entry)
    return {"types": out, "errors": loaded.errors}


def migrate(repo: Repo, source: str, dest: str, keys: list[str] | None = None) -> dict:
    """Move keys from ``source`` to ``dest``: copy each (with its notes),
    then read every copy back and compare it with the source, and only then
    remove the keys from ``source``. Refused before anything is written when
    a key is missing in ``source`` or already in ``dest``. A failure while
    copying or verifying removes the copies made and leaves ``source`` as it
    was; a failure while removing leaves the key in both vaults."""
    with audit.acting(f"vault migrate {source} {dest}"):
        return _migrate(repo, source, dest, keys)


def _migrate(repo: Repo, source: str, dest: str, keys: list[str] | None) -> dict:
    check_vault_name(source)
    check_vault_name(dest)
    if source == dest:
        raise ValidationError("a vault cannot be migrated into itself")
    src = service.get_vault(repo, source)
    dst = service.get_vault(repo, dest)
    available = src.list_keys()
    wanted = sorted(set(keys)) if keys else available
    for k in wanted:
        check_key_name(k)
    missing = [k for k in wanted if k not in available]
    if missing:
        raise NotFoundError(f"vault {source!r} has no secret {missing[0]!r}" +
                            (f" (nor {', '.join(missing[1:])})" if len(missing) > 1 else ""),
                            hint=did_you_mean(missing[0], available) or f"swamp vault list-keys {source}")
    clash = [k for k in wanted if dst.exists(k)]
    if clash:
        raise ConflictError(f"vault {dest!r} already has {', '.join(clash)}; nothing was moved",
                            hint=f"delete them from {dest} first, or leave them out with --keys")
    if not wanted:
        return {"from": source, "to": dest, "moved": [], "verified": [], "removedFromSource": []}

    copied: list[str] = []
    step, current = "copying", None
    try:
        for k in wanted:
            current = k
            value = src.get(k)
            register_secret(value)
            meta = src.read_meta(k)
            dst.put(k, value)
            copied.append(k)
            dst.write_meta(k, {**meta, "migratedFrom": source, "migratedAt": clock.isoformat()})
        step = "verifying"
        fresh = service.get_vault(repo, dest)  # a new handle: read what the vault really holds
        for k in wanted:
            current = k
            if fresh.get(k) != src.get(k):
                raise VaultMigrationError(f"the copy of {k!r} in {dest!r} does not read back identically")
    except Exception as e:
        undone, stuck = _undo(dst, copied)
        reason = e.message if isinstance(e, SwampError) else f"{type(e).__name__}: {e}"
        msg = (f"vault migrate stopped while {step} {current!r}: {reason}. Nothing was removed from {source!r}"
               + (f"; the copies made in {dest!r} were removed ({', '.join(undone)})" if undone else ""))
        hint = (f"these copies could not be removed from {dest!r}, remove them by hand: {', '.join(stuck)}"
                if stuck else "fix the cause and run the same command again")
        raise VaultMigrationError(msg, hint=hint) from None
    for k in wanted:
        audit.record(repo.secrets_dir, "migrate-in", dest, k, **{"from": source})

    removed, left = [], []
    for k in wanted:
        try:
            src.delete(k)
        except Exception as e:
            left.append((k, e.message if isinstance(e, SwampError) else type(e).__name__))
            continue
        removed.append(k)
        audit.record(repo.secrets_dir, "migrate-out", source, k, to=dest)
    result = {"from": source, "to": dest, "moved": wanted, "verified": wanted, "removedFromSource": removed}
    if left:
        raise VaultMigrationError(
            f"copied and verified {len(wanted)} key(s) into {dest!r}, but could not remove "
            f"{', '.join(k for k, _ in left)} from {source!r} ({left[0][1]}); they are in both vaults",
            hint=f"swamp vault delete {source} KEY -y, once the cause is fixed")
    return result


def _undo(dst, copied: list[str]) -> tuple[list[str], list[str]]:
    undone, stuck = [], []
    for k in copied:
        try:
            dst.delete(k)
            undone.append(k)
        except Exception:
            stuck.append(k)
    return undone, stuck
