"""Finding and opening a repository: its directories, its config and its
datastore. Everything a command needs hangs off one Repo object."""

from __future__ import annotations

import os
from contextvars import ContextVar
from functools import cached_property
from pathlib import Path
from typing import Callable

from swamp.errors import RepoNotFoundError

MARKER = ".swamp.yaml"

#: the repositories whose config tier was refreshed in this context (a CLI
#: process; one serve request, which runs in a context of its own)
_REFRESHED: ContextVar[frozenset] = ContextVar("swamp_config_refreshed", default=frozenset())


def new_config_scope() -> None:
    """From here on in this context (a serve request), the config tier is
    refreshed again before it is first read."""
    _REFRESHED.set(frozenset())


def config_lease(kind: str, name: str) -> str:
    """The lease every change to one managed document holds: ``kind`` is
    model, workflow or vault, ``name`` the document's name."""
    return f"config/{kind}/{name}"


def _shown(path: Path, limit: int = 200) -> str:
    text = str(path)
    return text if len(text) <= limit else text[:limit // 2] + "..." + text[-limit // 2:]


def find_repo_root(repo_dir: str | Path | None = None) -> Path:
    if repo_dir is None:
        repo_dir = os.environ.get("SWAMP_REPO_DIR")
    if repo_dir is not None:
        root = Path(repo_dir)
        root = root if root.is_absolute() else _cwd() / root
        try:
            found = (root / MARKER).is_file()
        except OSError as e:  # a name too long, a loop of links: not a path to a repository
            raise RepoNotFoundError(f"{_shown(root)} is not a usable directory: {e.strerror or e}",
                                    hint="check --repo-dir or SWAMP_REPO_DIR") from None
        if not found:
            raise RepoNotFoundError(f"{root} is not a swamp repository (no {MARKER})",
                                    hint="run 'swamp repo init' there first")
        return root
    here = _cwd()
    for d in (here, *here.parents):
        if (d / MARKER).is_file():
            return d
    raise RepoNotFoundError(f"no swamp repository at or above {here}",
                            hint="run 'swamp repo init', or pass --repo-dir")


def _cwd() -> Path:
    # A shell can sit in a directory another process removed: getcwd fails,
    # and that is the user's situation to fix, not a traceback.
    try:
        return Path.cwd()
    except FileNotFoundError:
        raise RepoNotFoundError("the current directory no longer exists",
                                hint="cd into the repository again, or pass --repo-dir with an absolute path") from None


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        #: work from the local cache of a shared datastore (no pull, no push)
        self.offline = False
        #: with managed config: called before this context first reads the
        #: config tier; the application layer sets it (a pull)
        self.on_config_read: Callable[["Repo"], None] | None = None
        self._config_key = object()  # this Repo in _REFRESHED (an id could be reused)

    @classmethod
    def open(cls, repo_dir: str | Path | None = None) -> "Repo":
        return cls(find_repo_root(repo_dir))

    # Configuration: in git, or with managedConfig in the shared datastore.
    @property
    def managed_config(self) -> bool:
        return bool(self.config.managedConfig)

    def config_root(self) -> Path:
        """THE resolver: where definitions (``models/``), workflows
        (``workflows/``) and vault configurations (``vaults/``) are read
        from and written to. The repository itself, or with
        ``managedConfig: true`` this checkout's copy of the datastore (its
        config tier, the same relative paths), refreshed once per context."""
        if not self.managed_config:
            return self.root
        hook = self.on_config_read
        if hook is not None and self._config_key not in _REFRESHED.get():
            _REFRESHED.set(_REFRESHED.get() | {self._config_key})
            hook(self)
        return self.datastore.root

    def config_rel(self, path: Path) -> str | None:
        """``path``'s name in the datastore when it lies in its tree (the
        config tier), else None (a file of the repository)."""
        try:
            return path.absolute().relative_to(self.datastore.root).as_posix()
        except ValueError:
            return None

    def write_config(self, path: Path, data: str | bytes) -> None:
        """Write a definition, workflow or vault configuration where it
        lives: through the datastore in the config tier (so it is journaled
        and published by the session's push), else atomically in place."""
        data = data.encode() if isinstance(data, str) else data
        rel = self.config_rel(path) if self.managed_config else None
        if rel is not None:
            self.datastore.write_bytes(rel, data)
            return
        from swamp.util.atomic import atomic_write

        atomic_write(path, data)

    def remove_config(self, path: Path) -> None:
        rel = self.config_rel(path) if self.managed_config else None
        if rel is not None:
            self.datastore.delete(rel)
        else:
            path.unlink(missing_ok=True)

    @property
    def models_dir(self) -> Path:
        return self.config_root() / "models"

    @property
    def workflows_dir(self) -> Path:
        return self.config_root() / "workflows"

    @property
    def vaults_dir(self) -> Path:
        return self.config_root() / "vaults"

    @property
    def extensions_dir(self) -> Path:
        return self.root / "extensions" / "models"

    # Local-only runtime state (secrets, catalog, sync state) lives here even
    # when the datastore is elsewhere.
    @property
    def local_dir(self) -> Path:
        return self.root / ".swamp"

    @property
    def secrets_dir(self) -> Path:
        return self.local_dir / "secrets"

    @cached_property
    def config(self):
        """The settings, read on the fast path (attribute access)."""
        from swamp.repo.config_read import read_config
        from swamp.util import yamlio

        from swamp.repo.swamp_version import refuse_newer

        path = self.root / MARKER
        config = read_config(yamlio.load(path), str(path))
        refuse_newer(config.swampVersion, str(path))
        return config

    def config_model(self):
        """The settings as their pydantic schema, for commands that change them."""
        from swamp.repo.config import RepoConfig
        from swamp.util import documents, yamlio

        from swamp.repo.swamp_version import refuse_newer

        path = self.root / MARKER
        config = documents.validate(RepoConfig, yamlio.load(path), str(path))
        refuse_newer(config.swampVersion, str(path))
        return config

    def save_config(self, config) -> None:
        from swamp.util import yamlio
        from swamp.util.atomic import atomic_write

        atomic_write(self.root / MARKER, yamlio.dumps(config.model_dump(exclude_none=True, exclude_defaults=False)))
        self.__dict__.pop("config", None)

    @cached_property
    def datastore(self):
        from swamp.repo.datastores import open_datastore

        return open_datastore(self)
