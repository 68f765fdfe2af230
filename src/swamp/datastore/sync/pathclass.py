"""Every datastore path belongs to exactly one conflict class (SYNC.md
"Conflicts"). This module is the one place that says which; the engine only
asks ``classify``.

- IMMUTABLE: data version directories ``data/**/<int version>/...``,
  ``outputs/**``, ``workflow-runs/**``. Written once; a conflict is a bug.
- MERGEABLE: registered documents (JSON or YAML maps), merged per key.
- LOCAL_ONLY: never crosses the sync boundary.
- OTHER: conflicts keep theirs in place and save ours aside.
"""

from __future__ import annotations

import enum
import fnmatch
import re

from swamp.datastore.base import is_local_only


class PathClass(enum.Enum):
    IMMUTABLE = "immutable"
    MERGEABLE = "mergeable"
    LOCAL_ONLY = "local-only"
    OTHER = "other"


IMMUTABLE_TOPS = frozenset({"outputs", "workflow-runs"})
#: Content files that a lazily hydrated cache fetches on first read.
LAZY_BASENAMES = frozenset({"raw"})
_CONFLICT_COPY_RE = re.compile(r"\.conflict-[A-Za-z0-9_.-]+-\d+$")

# glob pattern ('*' crosses '/') -> "json" | "yaml"
_MERGEABLE: dict[str, str] = {}


def register_mergeable(pattern: str, fmt: str | None = None) -> None:
    """Declare the documents at ``pattern`` (an fnmatch glob over the
    datastore-relative path) as per-key mergeable maps."""
    if fmt is None:
        fmt = "yaml" if pattern.endswith((".yaml", ".yml")) else "json"
    if fmt not in ("json", "yaml"):
        raise ValueError(f"unknown mergeable format {fmt!r}")
    _MERGEABLE[pattern] = fmt


for _p in ("config/shared.json", "config/shared.yaml", "extensions/lockfile.json",
           "config/upstream_extensions.json"):
    register_mergeable(_p)


def mergeable_format(rel: str) -> str | None:
    for pattern, fmt in _MERGEABLE.items():
        if fnmatch.fnmatchcase(rel, pattern):
            return fmt
    return None


def is_conflict_copy(rel: str) -> bool:
    return bool(_CONFLICT_COPY_RE.search(rel))


def conflict_copy_name(rel: str, peer: str, seq: int) -> str:
    return f"{rel}.conflict-{peer}-{seq}"


def is_data_version_path(rel: str) -> bool:
    """data/<type...>/<modelId>/<name>/<version>/<file>: an integer segment
    below the data name with something under it."""
    segs = rel.split("/")
    return segs[0] == "data" and any(s.isdigit() for s in segs[3:-1])


def _is_latest_pointer(rel: str) -> bool:
    # `latest` is derived from the version directories, never synced (S3).
    return rel.startswith("data/") and rel.rsplit("/", 1)[-1] == "latest"


def classify(rel: str) -> PathClass:
    if is_local_only(rel) or is_conflict_copy(rel) or _is_latest_pointer(rel):
        return PathClass.LOCAL_ONLY
    if rel.split("/", 1)[0] in IMMUTABLE_TOPS or is_data_version_path(rel):
        return PathClass.IMMUTABLE
    if mergeable_format(rel) is not None:
        return PathClass.MERGEABLE
    return PathClass.OTHER


def is_synced(rel: str) -> bool:
    return classify(rel) is not PathClass.LOCAL_ONLY


def is_lazy(rel: str) -> bool:
    return is_data_version_path(rel) and rel.rsplit("/", 1)[-1] in LAZY_BASENAMES
