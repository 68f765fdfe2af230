"""What an owner hands the sync engine to renumber its numbered version
directories (``rules.PathRules.renumber``; applied by renumber.py): the
scheme, and the view of the cache it rewrites through. Declared here, below
the rules that carry a scheme and the renumbering that applies it."""

from __future__ import annotations

from typing import Iterable, Protocol


class LocalFiles(Protocol):
    """What a scheme may do to the cache while it rewrites."""

    def read(self, rel: str) -> bytes | None: ...

    def write(self, rel: str, data: bytes) -> None: ...

    def files(self, prefix: str) -> list[str]: ...


class VersionScheme(Protocol):
    """An owner's knowledge of its numbered version directories."""

    def split(self, rel: str) -> tuple[str, int] | None:
        """(the directory holding the versions, the version number) of a
        path inside a version directory ``<versions>/<n>/...``; None for
        any other path."""

    def lease(self, versions: str) -> str:
        """The lease the versions of ``versions`` are allocated under; a new
        one is published only under it (publishing.py). Optional: a scheme
        without it publishes without a lease."""

    def names(self, files: LocalFiles, versions: str, version: int) -> Iterable[str]:
        """The paths (records) that name that version: held back with it
        while it may not be published (publishing.py). Optional."""

    def rewrite(self, files: LocalFiles, versions: str, old: int, new: int) -> Iterable[str]:
        """Make the contents follow version ``old`` of ``versions`` moving
        to ``new`` (already moved); returns the paths it changed."""
