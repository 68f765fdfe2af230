"""What every sync reports (SYNC.md, "What every sync command reports").
It lives in the sync package, the one that fills it in; the datastore
interface only passes it on (zeros for a filesystem datastore)."""

from __future__ import annotations


class SyncCounts:
    """What every sync reports (SYNC.md); zeros for a filesystem datastore.
    ``renumbered``: our unpublished versions a pull moved to the next free
    number (renumber.py), ``{"versions", "from", "to"}`` each. (Not a
    dataclass: the dataclasses module imports inspect, ~4 ms of a command.)"""

    FIELDS = ("filesPulled", "filesPushed", "filesDeleted", "bytesPulled", "bytesPushed", "requests", "conflicts",
              "head", "renumbered")

    def __init__(self, filesPulled: int = 0, filesPushed: int = 0, filesDeleted: int = 0, bytesPulled: int = 0,
                 bytesPushed: int = 0, requests: int = 0, conflicts: list | None = None, head: int = 0,
                 renumbered: list | None = None) -> None:
        self.filesPulled, self.filesPushed, self.filesDeleted = filesPulled, filesPushed, filesDeleted
        self.bytesPulled, self.bytesPushed, self.requests = bytesPulled, bytesPushed, requests
        self.conflicts = [] if conflicts is None else conflicts
        self.head = head
        self.renumbered = [] if renumbered is None else renumbered

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SyncCounts):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return "SyncCounts(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.FIELDS) + ")"

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
