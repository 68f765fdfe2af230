"""Access administration use cases: read or change one of the access
documents (``repo/access_docs.py``) in a datastore session, so that a
change made on one checkout is published for every replica and peer.

A change is a read-modify-write under ``Datastore.editing`` (other
processes of this checkout wait; peers' copies merge per key when the
session pushes). ``check`` sees the whole map as it would be written and
raises before anything is written: a command never leaves a document in
a shape a server would refuse."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from swamp.app.lifecycle import changing, is_shared, reading
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import UnpublishedError
from swamp.repo import access_docs

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def shared(repo: Repo) -> bool:
    """Whether the access documents are shared with other checkouts."""
    return is_shared(repo)


def document_file(repo: Repo, kind: str) -> Path:
    """Where this checkout keeps the ``kind`` document (a server watches its
    stamp to know when to read it again)."""
    return repo.datastore.local_path(access_docs.PATHS[kind])


def check_private(path: Path) -> None:
    """Refuse an access document (or its directory) that others may write."""
    access_docs.check_private(path)


def read(repo: Repo, kind: str) -> dict:
    """The newest ``kind`` map (pulled first on a shared datastore)."""
    with reading(repo):
        return access_docs.read(repo.datastore, kind)


def read_cached(repo: Repo, kind: str) -> dict:
    """The ``kind`` map as this checkout last pulled it (no session: a
    server's request path, which a background watch keeps fresh)."""
    return access_docs.read(repo.datastore, kind)


def change(repo: Repo, kind: str, command: str, edit: Callable[[dict], Any],
           check: Callable[[dict], None] | None = None) -> Any:
    """``edit(entries)`` changes the map in place and returns the result;
    ``check(entries)`` validates the new map before it is written."""
    ds = repo.datastore
    counts = SyncCounts()
    result = None
    try:
        with changing(repo, command, into=counts), ds.editing(access_docs.PATHS[kind]):
            entries = access_docs.read(ds, kind)
            result = edit(entries)
            if check is not None:
                check(entries)
            access_docs.write(ds, kind, entries)
    except UnpublishedError as e:
        raise e.with_value(result) if result is not None else e
    return result
