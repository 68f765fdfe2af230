"""The command lifecycle, in one place.

``reading`` wraps a use case that only reads: on a shared datastore it pulls
first (one request when nothing changed), unless offline. ``changing`` wraps
one that changes state: it takes the leases the use case needs (sorted, so
two commands never deadlock), pulls, runs the body, pushes one commit and
releases, and the use case reports success only once that commit is
durable. Both yield the SyncCounts they fill in, so every result can carry
what crossed the wire.

When the body did its work but the push (or the release after it) failed,
``changing`` raises UnpublishedError: the work is kept on this machine and
published by the next sync or the next command that changes state. The
use case attaches what it would have reported (``with_value``)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Iterator, Sequence

from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ConflictError, LeaseLostError, SwampError, TransientError, UnpublishedError
from swamp.util.tracing import span

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def is_shared(repo: Repo) -> bool:
    return repo.datastore.kind != "filesystem"


def is_published(ds, path: str) -> bool:
    """Whether ``path`` is as this cache last saw it committed (not among
    its unpublished changes): after a ``changing`` session that raised, it
    tells a commit that landed from one that did not."""
    try:
        return path not in ds.status().get("dirtyPaths", ())
    except SwampError:
        return False


@contextlib.contextmanager
def reading(repo: Repo, *, into: SyncCounts | None = None) -> Iterator[SyncCounts]:
    try:
        with span("swamp.session", mutating=False), repo.datastore.session(mutating=False) as counts:
            yield counts
    except TransientError as e:  # the remote did not answer, even after retries
        raise SwampError(e.message, code=e.code,
                         hint=(e.hint + "; " if e.hint else "")
                         + "this command only reads: add --offline to work from this machine's copy") from e
    if into is not None:
        into.add(counts)


@contextlib.contextmanager
def changing(repo: Repo, command: str, *, leases: Sequence[str] = (),
             into: SyncCounts | None = None) -> Iterator[SyncCounts]:
    counts = None
    done = False
    try:
        with span("swamp.session", mutating=True, command=command, leases=",".join(sorted(leases))), \
                repo.datastore.session(mutating=True, locks=leases, command=command) as counts:
            yield counts
            done = True
    except (LeaseLostError, ConflictError):
        raise  # nothing published on purpose, or a conflict to resolve: not "unpublished"
    except SwampError as e:
        if not done:
            raise
        if e.code == "remote_changed":
            # A sync would be refused the same way: the error keeps its code
            # and its hint (attach again, which republishes this work).
            raise UnpublishedError(f"{command}: done on this machine, but not published: {e.message}",
                                   hint=e.hint, code=e.code) from e
        raise UnpublishedError(f"{command}: done on this machine, but not published: {e.message}",
                               hint="run 'swamp datastore sync' to publish it (nothing needs to run again)") from e
    finally:
        if into is not None and counts is not None:
            into.add(counts)  # a failed command's push counts too


def refresh(repo: Repo) -> SyncCounts:
    """Pull now, outside any command's session (a long-running use case
    watching for peers' changes, such as a cancel request). Nothing to do
    on a directory datastore or offline."""
    ds = repo.datastore
    if not is_shared(repo) or getattr(ds, "offline", False):
        return SyncCounts()
    return ds.sync(pull=True, push=False)
