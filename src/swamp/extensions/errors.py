"""The errors a user meets around extensions."""

from __future__ import annotations

from swamp.errors import SwampError


class ExtensionError(SwampError):
    code = "extension"


class IndexError_(SwampError):
    """The package index could not be read, or does not have what was asked."""

    code = "index"


class HashMismatchError(SwampError):
    """A downloaded wheel is not the one the lockfile pins: never installed."""

    code = "hash_mismatch"


class PinnedIndexError(SwampError):
    """An extension pinned to one index was asked for from another without
    ``--move``: its code comes only from the index it was pinned from."""

    code = "pinned_index"


class AmbiguousIndexError(SwampError):
    """A name not pinned yet is on more than one trusted index: which one is
    the team's is not swamp's guess to make (a look-alike package on a second
    index is how dependency confusion works)."""

    code = "ambiguous_index"


class TamperedInstallError(SwampError):
    """An installed extension's files are not the ones its pinned wheels
    unpacked to (changed, added or made writable by others since): never
    loaded."""

    code = "tampered_install"


#: refusals about what the code IS (not whether it works): their own hint is
#: the one to show, never "update the extension", which would pin what was refused
INTEGRITY_CODES = frozenset({HashMismatchError.code, TamperedInstallError.code})


def failure_hint(e: SwampError | None) -> str:
    """The hint for an extension that failed to load because of ``e``."""
    if e is not None and e.code in INTEGRITY_CODES and e.hint:
        return e.hint
    return "fix or update the extension ('swamp extension update NAME')"
