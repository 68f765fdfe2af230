"""Shared settings: a JSON map in the datastore (``config/shared.json``) that
commands update by read-modify-write. On a shared datastore it is a
mergeable document: two peers setting different keys from stale caches both
keep their change; the same key set differently on both is a conflict that
names the key, and nothing is lost."""

from __future__ import annotations

import json
from typing import Any

from swamp.errors import NotFoundError, ValidationError

PATH = "config/shared.json"


def _read(ds) -> dict:
    try:
        raw = ds.read_bytes(PATH)
    except NotFoundError:
        return {}
    data = json.loads(raw or b"{}")
    if not isinstance(data, dict):
        raise ValidationError(f"{PATH} is not a JSON map")
    return data


def _write(ds, data: dict) -> None:
    ds.write_bytes(PATH, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def _check_key(key: str) -> str:
    if not key or len(key) > 128 or not all(c.isalnum() or c in "._-" for c in key):
        raise ValidationError(f"invalid setting name {key!r}", hint="use letters, digits, '.', '_' and '-'")
    return key


def list_settings(repo) -> dict:
    with repo.datastore.session(mutating=False):
        return dict(sorted(_read(repo.datastore).items()))


def get_setting(repo, key: str) -> Any:
    settings = list_settings(repo)
    if key not in settings:
        raise NotFoundError(f"no setting named {key!r}")
    return settings[key]


def set_setting(repo, key: str, value: Any) -> dict:
    _check_key(key)
    ds = repo.datastore
    with ds.session(mutating=True, command=f"config set {key}") as counts:
        data = _read(ds)
        data[key] = value
        _write(ds, data)
    return {"key": key, "value": value, "sync": counts.to_json()}


def unset_setting(repo, key: str) -> dict:
    ds = repo.datastore
    with ds.session(mutating=True, command=f"config unset {key}") as counts:
        data = _read(ds)
        if key not in data:
            raise NotFoundError(f"no setting named {key!r}")
        del data[key]
        _write(ds, data)
    return {"key": key, "sync": counts.to_json()}
