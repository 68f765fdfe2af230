"""Errors the sync engine raises besides the ObjectStore's own."""

from __future__ import annotations

from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ConflictError, SwampError


class CorruptRemoteError(SwampError):
    """The remote log or a blob is not what the protocol promises (a gap, a
    bad record, a hash mismatch). Never papered over: nothing is applied."""

    code = "corrupt_remote"


class SyncConflictError(ConflictError):
    """Raised by pull/push/sync after the safe part is finished and recorded:
    some paths conflicted. ``counts`` is the full report, ``counts.conflicts``
    says what happened to each path (theirs in place, ours saved aside)."""

    def __init__(self, counts: SyncCounts) -> None:
        parts = []
        for c in counts.conflicts:
            what = c["path"]
            if c.get("keys"):
                what += " (key " + ", ".join(repr(k) for k in c["keys"]) + ")"
            if c.get("savedAs"):
                what += f", yours saved as {c['savedAs']}"
            parts.append(what)
        super().__init__(
            f"{len(counts.conflicts)} conflict(s): " + "; ".join(parts),
            hint="theirs is in place; compare with the saved copy, edit the file, then sync again",
        )
        self.counts = counts
