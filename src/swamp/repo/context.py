"""Finding and opening a repository: its directories, its config and its
datastore. Everything a command needs hangs off one Repo object."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from swamp.errors import RepoNotFoundError

MARKER = ".swamp.yaml"


def find_repo_root(repo_dir: str | Path | None = None) -> Path:
    if repo_dir is None:
        repo_dir = os.environ.get("SWAMP_REPO_DIR")
    if repo_dir is not None:
        root = Path(repo_dir).absolute()
        if not (root / MARKER).is_file():
            raise RepoNotFoundError(f"{root} is not a swamp repository (no {MARKER})",
                                    hint="run 'swamp repo init' there first")
        return root
    here = Path.cwd().absolute()
    for d in (here, *here.parents):
        if (d / MARKER).is_file():
            return d
    raise RepoNotFoundError(f"no swamp repository at or above {here}",
                            hint="run 'swamp repo init', or pass --repo-dir")


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        #: work from the local cache of a shared datastore (no pull, no push)
        self.offline = False

    @classmethod
    def open(cls, repo_dir: str | Path | None = None) -> "Repo":
        return cls(find_repo_root(repo_dir))

    # Directories in git.
    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    @property
    def workflows_dir(self) -> Path:
        return self.root / "workflows"

    @property
    def vaults_dir(self) -> Path:
        return self.root / "vaults"

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

        path = self.root / MARKER
        return read_config(yamlio.load(path), str(path))

    def config_model(self):
        """The settings as their pydantic schema, for commands that change them."""
        from swamp.repo.config import RepoConfig
        from swamp.util import documents, yamlio

        path = self.root / MARKER
        return documents.validate(RepoConfig, yamlio.load(path), str(path))

    def save_config(self, config) -> None:
        from swamp.util import yamlio
        from swamp.util.atomic import atomic_write

        atomic_write(self.root / MARKER, yamlio.dumps(config.model_dump(exclude_none=True, exclude_defaults=False)))
        self.__dict__.pop("config", None)

    @cached_property
    def datastore(self):
        from swamp.repo.datastores import open_datastore

        return open_datastore(self)
