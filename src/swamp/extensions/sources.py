"""Local checkouts loaded without publishing (``swamp extension source``):
a developer points the repository at an extension's working copy and its
types load from there, ahead of a pinned version of the same extension.

Which checkouts is this machine's business (the paths are its own), so the
list lives in the repository's local state, never synced nor committed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.extensions.install import make_root
from swamp.extensions.install_integrity import OTHERS_WRITE
from swamp.util.atomic import atomic_write

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def _file(repo: Repo) -> Path:
    return repo.local_dir / "cache" / "extensions" / "sources.json"


def read(repo: Repo) -> dict[str, dict]:
    """name -> {"path", "types"} (the types seen when it was added). A list
    that others could have written is refused: it says which code is loaded."""
    path = _file(repo)
    try:
        if path.stat().st_mode & OTHERS_WRITE:
            from swamp.errors import TamperedInstallError

            raise TamperedInstallError(f"{path} is writable by others: the local checkouts it lists are not loaded",
                                       hint=f"check what it lists, then 'chmod go-w {path}'")
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def write(repo: Repo, sources: dict[str, dict]) -> None:
    path = _file(repo)
    make_root(repo)
    atomic_write(path, json.dumps(sources, indent=2, sort_keys=True) + "\n", mode=0o644)  # never the umask's
