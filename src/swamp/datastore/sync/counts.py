"""What every sync reports (SYNC.md, "What every sync command reports").
It lives in the sync package, the one that fills it in; the datastore
interface only passes it on (zeros for a filesystem datastore)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SyncCounts:
    """What every sync reports (SYNC.md); zeros for a filesystem datastore."""

    filesPulled: int = 0
    filesPushed: int = 0
    filesDeleted: int = 0
    bytesPulled: int = 0
    bytesPushed: int = 0
    requests: int = 0
    conflicts: list = field(default_factory=list)
    head: int = 0
    #: our unpublished versions a pull moved to the next free number
    #: (renumber.py): ``{"versions", "from", "to"}`` each
    renumbered: list = field(default_factory=list)

    def add(self, other: "SyncCounts") -> None:
        for k in ("filesPulled", "filesPushed", "filesDeleted", "bytesPulled", "bytesPushed", "requests"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.conflicts.extend(other.conflicts)
        self.renumbered.extend(other.renumbered)
        self.head = max(self.head, other.head)

    def to_json(self) -> dict:
        out = {
            "filesPulled": self.filesPulled,
            "filesPushed": self.filesPushed,
            "filesDeleted": self.filesDeleted,
            "bytesPulled": self.bytesPulled,
            "bytesPushed": self.bytesPushed,
            "requests": self.requests,
            "conflicts": list(self.conflicts),
            "head": self.head,
        }
        if self.renumbered:  # only when it happened: rare, and worth saying
            out["renumbered"] = list(self.renumbered)
        return out
