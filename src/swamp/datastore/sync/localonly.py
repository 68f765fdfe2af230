"""The one rule for what never leaves this machine (SYNC.md "local only").

Whatever the datastore, these paths are never uploaded, never taken from a
remote record, and never counted as local changes:

- anything under ``.sync/`` (sync state), ``.locks/`` (lock files and their
  sidecars), ``secrets/`` (the local vault) and ``cache/`` (disposable
  caches: the query catalog, latest-version hints);
- temp files (``.tmp-*``), which an atomic writer renames into place once
  complete;
- conflict copies (``<path>.conflict-<peer>-<seq>``), ours kept aside when a
  pull found the path changed on both sides.

Nothing else is an exception: the owners of the other paths declare how they
sync (``rules.PathRules``)."""

from __future__ import annotations

import re

from swamp.util.atomic import TMP_PREFIX

#: top-level directories that never leave this machine
LOCAL_ONLY_DIRS = frozenset({".sync", ".locks", "secrets", "cache"})
_CONFLICT_COPY_RE = re.compile(r"\.conflict-[A-Za-z0-9_.-]+-\d+$")


def is_conflict_copy(rel: str) -> bool:
    return bool(_CONFLICT_COPY_RE.search(rel))


def conflict_copy_name(rel: str, peer: str, seq: int) -> str:
    return f"{rel}.conflict-{peer}-{seq}"


def is_local_only(rel: str) -> bool:
    return (rel.split("/", 1)[0] in LOCAL_ONLY_DIRS or rel.rsplit("/", 1)[-1].startswith(TMP_PREFIX)
            or is_conflict_copy(rel))


def is_synced(rel: str) -> bool:
    return not is_local_only(rel)
