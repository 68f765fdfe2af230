"""Upgrading a shared datastore's sync format (``swamp datastore upgrade``):
a remote set up with sync format 1, by a swamp that does not read contents
inline in commit records, moves to this swamp's format, so small contents
travel inline there too. Older swamps are refused by it from then on, with
an error that says to upgrade; none is ever misled (docs/sync.md,
"Upgrading a format 1 remote")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.app.datastore import _engine

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def upgrade(repo: Repo) -> dict:
    """``{"from", "to", "upgraded", "seq", "sync"}``: the formats before
    and after, whether anything changed, the seq of the upgrade record
    appended (None when none was needed), and what crossed the wire (its
    pull first: conflicts it met are listed there, their copies kept)."""
    return _engine(repo).upgrade_format()
