"""The extension lockfile: which extensions a repository runs, pinned.

One document, ``extensions/lockfile.json``, one schema (``Lockfile``). Each
entry pins an extension's version, the index it came from, the sha256 of
every wheel installed for it (the extension and its dependencies) and the
model, vault and report types it provides, so a type can be found without
importing anything. (``vaultTypes`` and ``reportTypes`` came later: an entry
without them provides none, and they are left out of the file when empty,
so an older entry reads and writes back the same bytes.)
It also holds the indexes the team trusts.

Where it lives: on a shared datastore, in the datastore (a mergeable
document, merged per entry by the sync engine, so every peer and every
serve replica runs the same pins without a git round-trip); otherwise in
the repository, beside ``extensions/models/``, to be committed to git.

Entries hold no timestamps: two peers pinning the same thing write the same
bytes, and a merge of them is clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from swamp.errors import NotFoundError, ValidationError
from swamp.util import documents
from swamp.util.atomic import atomic_write

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: the same relative path in the repository and in the datastore
PATH = "extensions/lockfile.json"


class Wheel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: str
    version: str
    filename: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str
    index: str
    #: sorted by filename; the extension's own wheel is one of them
    wheels: list[Wheel]
    #: the model types it provides, sorted
    types: list[str] = []
    #: the vault types it provides (entry point group ``swamp.vault_types``), sorted
    vaultTypes: list[str] = []
    #: the report types it provides, sorted (informational: reports load from every pinned extension)
    reportTypes: list[str] = []

    def wheel_of(self, project: str) -> Wheel | None:
        for w in self.wheels:
            if w.project == project:
                return w
        return None


class Lockfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lockfileVersion: Literal[1] = 1
    #: index URL -> true; the indexes searched when no --index is given
    trustedIndexes: dict[str, bool] = {}
    extensions: dict[str, Entry] = {}

    def provider_of(self, type_name: str) -> list[str]:
        """The pinned extensions that provide a type (more than one is an error)."""
        return sorted(n for n, e in self.extensions.items() if type_name in e.types)

    def vault_provider_of(self, type_name: str) -> list[str]:
        """The pinned extensions that provide a vault type (more than one is an error)."""
        return sorted(n for n, e in self.extensions.items() if type_name in e.vaultTypes)


def parse(raw: bytes, source: str) -> Lockfile:
    try:
        data = json.loads(raw or b"{}")
    except ValueError as e:
        raise ValidationError(f"{source}: not valid JSON ({e})",
                              hint="fix or restore the file (git, or 'swamp datastore sync')") from None
    return documents.validate(Lockfile, data, source)


#: entry fields written only when not empty (added after lockfileVersion 1 shipped)
_OPTIONAL = ("vaultTypes", "reportTypes")


def dumps(lock: Lockfile) -> bytes:
    doc = lock.model_dump(mode="json")
    for entry in doc["extensions"].values():
        for key in _OPTIONAL:
            if not entry.get(key):
                entry.pop(key, None)
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def is_shared(repo: Repo) -> bool:
    return repo.datastore.kind != "filesystem"


def read(repo: Repo) -> Lockfile:
    """The lockfile as this checkout has it (in a session: as of its pull).
    A missing one is empty."""
    raw = _read_raw(repo)
    return parse(raw, PATH) if raw is not None else Lockfile()


def _read_raw(repo: Repo) -> bytes | None:
    if is_shared(repo):
        try:
            return repo.datastore.read_bytes(PATH)
        except NotFoundError:
            # Before the first change on a shared datastore: the pins a git
            # checkout carried start the shared document (under managed
            # config the repository's copy is no longer read).
            if repo.config.managedConfig or not _repo_file(repo).is_file():
                return None
            return _repo_file(repo).read_bytes()
    path = _repo_file(repo)
    if path.is_file():
        return path.read_bytes()
    try:  # a repository moved back from a shared datastore: its pins came along in the datastore
        return repo.datastore.read_bytes(PATH)
    except NotFoundError:
        return None


def write(repo: Repo, lock: Lockfile) -> None:
    """Write it where it lives (call inside a ``changing`` session)."""
    data = dumps(lock)
    if is_shared(repo):
        repo.datastore.write_bytes(PATH, data)
        return

    path = _repo_file(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)


def _repo_file(repo: Repo) -> Path:
    return repo.root / PATH


def location(repo: Repo) -> str:
    return f"datastore:{PATH}" if is_shared(repo) else PATH


#: the lease every change to the lockfile holds: the read-modify-write of one
#: document must not interleave, in one checkout or across peers
LEASE = "extensions/lockfile"
