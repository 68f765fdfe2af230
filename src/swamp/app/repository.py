"""The repository a command works in: found from ``--repo-dir``,
``SWAMP_REPO_DIR`` or the nearest parent holding ``.swamp.yaml``, and
opened. The fronts reach ``swamp.repo`` through here (making and
refreshing a repository is ``app.repo_setup``)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from swamp.repo.context import Repo, find_repo_root

__all__ = ["Repo", "open_repo", "repo_root"]


def open_repo(repo_dir: str | Path | None, *, offline: bool = False,
              on_config_read: Callable[[Repo], None] | None = None) -> Repo:
    """The repository at (or above) ``repo_dir``. ``offline``: no session
    pulls or pushes; ``on_config_read``: called before the first read of the
    config tier (managed config pulls there)."""
    repo = Repo.open(repo_dir)
    repo.offline = offline
    repo.on_config_read = on_config_read
    return repo


def repo_root(repo_dir: str | Path | None) -> Path:
    """The root of the repository at (or above) ``repo_dir``, without
    opening it (what `repo upgrade` and `agent ...` work on)."""
    return find_repo_root(repo_dir)
