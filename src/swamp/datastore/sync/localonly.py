"""The one rule for what never leaves this machine (SYNC.md "local only").

Whatever the datastore, these paths are never uploaded, never taken from a
remote record, and never counted as local changes:

- anything under ``.sync/`` (sync state), ``.locks/`` (lock files and their
  sidecars), ``secrets/`` (the local vault) and ``cache/`` (disposable
  caches: the query catalog, latest-version hints);
- temp files (``.tmp-*``), which an atomic writer renames into place once
  complete;
- conflict copies (``<path>.conflict-<peer>-<seq>-<id>``, ``<id>`` being the
  first 12 hex digits of the incoming commit's id; ``<path>.conflict-<peer>-<seq>``
  from an older swamp), ours kept aside when a pull found the path changed
  on both sides.

Nothing else is an exception: the owners of the other paths declare how they
sync (``rules.PathRules``)."""

from __future__ import annotations

import re

from swamp.util.atomic import TMP_PREFIX
from swamp.util.ids import uuid4_hex

#: top-level directories that never leave this machine
LOCAL_ONLY_DIRS = frozenset({".sync", ".locks", "secrets", "cache"})
#: hex digits of the commit id a conflict copy's name carries
COPY_ID_LEN = 12
#: ``<path>.conflict-<peer>-<seq>-<id>``, or without ``-<id>`` (an older swamp)
CONFLICT_COPY_RE = re.compile(
    r"^(?P<path>.+)\.conflict-(?P<peer>[A-Za-z0-9_.-]+?)-(?P<seq>\d+)(?:-(?P<id>[0-9a-f]{%d}))?$" % COPY_ID_LEN)


def is_conflict_copy(rel: str) -> bool:
    return CONFLICT_COPY_RE.match(rel.rsplit("/", 1)[-1]) is not None


def conflict_copy_name(rel: str, peer: str, seq: int, commit_id: str) -> str:
    """Where ours is kept aside. The seq alone repeats (a remote emptied
    and set up again counts from 1 again), so the name also carries the
    incoming commit's id (random): a later conflict on the same path never
    lands on an earlier copy. ``commit_id`` shorter than COPY_ID_LEN hex
    digits (a record from an older swamp) is replaced by a random one."""
    ident = commit_id.lower()[:COPY_ID_LEN]
    if len(ident) < COPY_ID_LEN or any(c not in "0123456789abcdef" for c in ident):
        ident = uuid4_hex()[:COPY_ID_LEN]
    return f"{rel}.conflict-{peer}-{seq}-{ident}"


def is_local_only(rel: str) -> bool:
    return (rel.split("/", 1)[0] in LOCAL_ONLY_DIRS or rel.rsplit("/", 1)[-1].startswith(TMP_PREFIX)
            or is_conflict_copy(rel))


def is_synced(rel: str) -> bool:
    return not is_local_only(rel)
