"""Local checkouts loaded without publishing (``swamp extension source``):
a developer points the repository at an extension's working copy and its
types load from there, ahead of a pinned version of the same extension.

Which checkouts is this machine's business (the paths are its own), so the
list lives in the repository's local state, never synced nor committed."""

from __future__ import annotations

import json
from pathlib import Path

from swamp.util.atomic import atomic_write


def _file(repo) -> Path:
    return repo.local_dir / "cache" / "extensions" / "sources.json"


def read(repo) -> dict[str, dict]:
    """name -> {"path", "types"} (the types seen when it was added)."""
    try:
        doc = json.loads(_file(repo).read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def write(repo, sources: dict[str, dict]) -> None:
    path = _file(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(sources, indent=2, sort_keys=True) + "\n")
