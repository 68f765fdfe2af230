"""Upgrading a shared datastore's sync format (``swamp datastore upgrade``):
a remote set up with sync format 1, by a swamp that does not read contents
inline in commit records, moves to this swamp's format, so small contents
travel inline there too. Older swamps are refused by it from then on, with
an error that says to upgrade; none is ever misled (docs/sync.md,
"Upgrading a format 1 remote")."""

from __future__ import annotations

from swamp.app.datastore import _engine


def upgrade(repo) -> dict:
    """``{"from", "to", "upgraded", "seq"}``: the formats before and after,
    whether anything changed, and the seq of the upgrade record appended
    (None when none was needed)."""
    return _engine(repo).upgrade_format()
