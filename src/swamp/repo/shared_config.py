"""Shared settings: a JSON map in the datastore (``config/shared.json``) that
commands update by read-modify-write (swamp.app.settings, inside a session). On a shared datastore it is a
mergeable document: two peers setting different keys from stale caches both
keep their change; the same key set differently on both is a conflict that
names the key, and nothing is lost."""

from __future__ import annotations

import json

from swamp.errors import NotFoundError, ValidationError

PATH = "config/shared.json"


def read(ds) -> dict:
    try:
        raw = ds.read_bytes(PATH)
    except NotFoundError:
        return {}
    data = json.loads(raw or b"{}")
    if not isinstance(data, dict):
        raise ValidationError(f"{PATH} is not a JSON map")
    return data


def write(ds, data: dict) -> None:
    ds.write_bytes(PATH, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def check_key(key: str) -> str:
    if not key or len(key) > 128 or not all(c.isalnum() or c in "._-" for c in key):
        raise ValidationError(f"invalid setting name {key!r}", hint="use letters, digits, '.', '_' and '-'")
    return key
