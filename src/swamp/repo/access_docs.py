"""Access state kept in the datastore, so that every serve replica and every
peer sees the same: tokens (hashes only), the grants made by ``swamp access
grant create``, and groups. Three JSON documents, each a map of maps keyed
by name or id:

- ``access/tokens.json``: ``{"tokens": {NAME: {"sha256", "createdAt", ...}}}``
  (used when the datastore is shared; a directory datastore keeps tokens in
  the machine's secrets, ``swamp/access/tokens.py``);
- ``access/grants.json``: ``{"grants": {ID: {"subjects", "effect", ...}}}``;
- ``access/groups.json``: ``{"groups": {NAME: {"members": {SUBJECT: true}}}}``.

On a shared datastore they are mergeable documents (``sync_rules.py``):
two peers minting different tokens, creating different grants or adding
different members from stale caches both keep their change. That is why
members are a map and not a list: a list would conflict on every
concurrent add. The documents hold plain data; what a valid grant or
token looks like is checked by ``swamp/access/grants.py`` and ``tokens.py``
before anything is written."""

from __future__ import annotations

import json
import os
import stat

from swamp.errors import NotFoundError, ValidationError

KINDS = ("tokens", "grants", "groups")
PATHS = {kind: f"access/{kind}.json" for kind in KINDS}


def read(ds, kind: str) -> dict:
    """The ``kind`` map of its document ({} when there is none)."""
    path = PATHS[kind]
    try:
        raw = ds.read_bytes(path)
    except NotFoundError:
        return {}
    try:
        doc = json.loads(raw or b"{}")
    except ValueError:
        raise ValidationError(f"{path} in the datastore is not JSON",
                              hint="restore it with 'swamp datastore conflicts' or delete it") from None
    entries = doc.get(kind, {}) if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
        raise ValidationError(f"{path} in the datastore must hold one map, {kind!r}, of maps")
    return entries


def write(ds, kind: str, entries: dict) -> None:
    body = json.dumps({kind: entries}, indent=2, sort_keys=True) + "\n"
    ds.write_bytes(PATHS[kind], body.encode())
    # Whoever may write these decides who may do what: never other users of
    # the machine, even under a permissive umask (000 on some CI runners).
    path = ds.local_path(PATHS[kind])
    for p in (path, path.parent):
        os.chmod(p, stat.S_IMODE(os.stat(p).st_mode) & ~(stat.S_IWGRP | stat.S_IWOTH))


def check_private(path) -> None:
    """Refuse a document that another user of this machine could have
    changed (it, or its folder, writable by others): it could grant anything."""
    for p in (path, path.parent):
        if os.stat(p).st_mode & stat.S_IWOTH:
            raise ValidationError(f"{p} can be changed by every user of this machine, so it is not trusted",
                                  hint=f"chmod o-w {p}, and check that its content is what you expect")
