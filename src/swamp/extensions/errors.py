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
