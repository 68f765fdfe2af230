"""Which index an extension's code may come from.

A pinned extension comes only from the index it was pinned from, whatever
other indexes are trusted and whichever answers first: taking it from
another one is a move, asked for with ``--move`` and recorded in the
extension history like any other change of the pin. A name that is not
pinned yet comes from the index given, or from the one trusted index that
has it; when several trusted indexes have it, swamp refuses to pick (that
is the dependency-confusion attack: the same name published on a second
index the team also trusts)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from swamp.errors import AmbiguousIndexError, NotFoundError, PinnedIndexError, UsageError
from swamp.extensions.index import Index
from swamp.extensions.lockfile import Entry, Lockfile


def choose(lock: Lockfile, name: str, pinned: Entry | None, index: str | None, *, move: bool = False) -> Index:
    """The one index to take ``name`` from (see the module's text)."""
    if move and not index:
        raise UsageError("--move needs the index to move to", hint=f"swamp extension pull {name} --index URL --move")
    wanted = Index(index) if index else None
    if pinned is not None:
        if wanted is None or wanted.url == pinned.index:
            return Index(pinned.index)
        if not move:
            raise PinnedIndexError(
                f"{name} is pinned to the index {pinned.index}; not taking it from {wanted.url}",
                hint=f"moving an extension to another index is a change to review: if the team means it, "
                     f"'swamp extension pull {name} --index {wanted.url} --move' (recorded in "
                     f"'swamp extension history {name}')")
        return wanted
    if wanted is not None:
        return wanted
    if not lock.trustedIndexes:
        raise UsageError("no index given and none trusted",
                         hint="pass --index URL, or trust one: 'swamp extension trust add URL'")
    trusted = [Index(u) for u in sorted(lock.trustedIndexes)]
    with ThreadPoolExecutor(min(8, len(trusted))) as pool:
        having = [ix for ix, files in zip(trusted, pool.map(lambda ix: ix.files(name), trusted)) if files]
    if not having:
        raise NotFoundError(f"no trusted index has {name!r}",
                            hint="pass --index URL, or look with 'swamp extension search'")
    if len(having) > 1:
        raise AmbiguousIndexError(
            f"{name} is on more than one trusted index: " + ", ".join(ix.url for ix in having)
            + "; not guessing which one is the team's",
            hint=f"pass the index it must come from: 'swamp extension pull {name} --index URL' "
                 "(later pulls and updates then take it only from there)")
    return having[0]
