"""Small comparisons shared by pull and commit: the content identity of a
local file, a base or a change, and a path's parent directories."""

from __future__ import annotations

from .commitlog import Change
from .localtree import FileState
from .state import Base


def content_id(x: FileState | Base | Change | None) -> str | None:
    """Content identity of a local file, a base or a change (None = absent)."""
    if x is None or (isinstance(x, Change) and x.op == "delete"):
        return None
    return x.sha256


def parents(rel: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b"]``."""
    segs = rel.split("/")
    return ["/".join(segs[:i]) for i in range(1, len(segs))]
