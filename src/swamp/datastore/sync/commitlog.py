"""Commit records: ``log/<seq>.json``, created create-only. Creating log/N is
the single commit point of the protocol; everything else is derived.

Every record read from the remote is validated before anything touches the
disk: its seq and parent, and every path (no '..', not absolute, no NUL, no
backslash). A change to a path that must never be synced is rejected, not
applied, and reported.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from swamp.datastore.objectstore.base import ObjectNotFound, ObjectStore
from swamp.errors import ValidationError
from swamp.util.ids import hostname
from swamp.util.names import check_rel_path

from .errors import CorruptRemoteError
from .layout import SHA_RE, Layout
from .localonly import is_synced


@dataclass(frozen=True)
class Change:
    path: str
    op: str  # "put" | "delete"
    sha256: str | None = None
    size: int = 0

    def to_json(self) -> dict:
        return {"path": self.path, "op": self.op, "sha256": self.sha256, "size": self.size}


@dataclass
class Commit:
    seq: int
    parent: int
    id: str
    writer: dict
    time: str
    command: str
    changes: list[Change]
    #: paths in the record that failed validation (never applied)
    rejected: list[str] = field(default_factory=list)

    @property
    def peer(self) -> str:
        return str(self.writer.get("peer", "?"))

    def encode(self) -> bytes:
        return json.dumps({
            "seq": self.seq, "parent": self.parent, "id": self.id, "writer": self.writer,
            "time": self.time, "command": self.command,
            "changes": [c.to_json() for c in self.changes],
        }, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def writer_info(peer: str) -> dict:
    return {"peer": peer, "host": hostname(), "pid": os.getpid()}


def valid_path(path: object) -> bool:
    try:
        check_rel_path(path)  # type: ignore[arg-type]
    except ValidationError:
        return False
    return is_synced(path)  # type: ignore[arg-type]


def decode(seq: int, data: bytes) -> Commit:
    try:
        d = json.loads(data)
        if d["seq"] != seq or d["parent"] != seq - 1:
            raise ValueError(f"seq {d['seq']}/parent {d['parent']} in log/{seq}")
        changes, rejected = [], []
        for c in d["changes"]:
            if not valid_path(c.get("path")):
                rejected.append(repr(c.get("path")))
                continue
            if c["op"] == "put":
                if not isinstance(c["sha256"], str) or not SHA_RE.match(c["sha256"]):
                    raise ValueError(f"bad sha256 for {c['path']!r}")
                changes.append(Change(c["path"], "put", c["sha256"], int(c["size"])))
            elif c["op"] == "delete":
                changes.append(Change(c["path"], "delete"))
            else:
                raise ValueError(f"bad op {c['op']!r}")
        return Commit(seq, d["parent"], str(d.get("id", "")), dict(d.get("writer") or {}),
                      str(d.get("time", "")), str(d.get("command", "")), changes, rejected)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CorruptRemoteError(f"commit {seq} is malformed: {e}",
                                 hint="run 'swamp datastore verify'") from None


def list_seqs(store: ObjectStore, layout: Layout, after: int) -> list[int]:
    """Commit seqs after ``after``: one LIST with a start-after key."""
    seqs = (layout.log_seq(m.key) for m in store.list(layout.log_prefix, start_after=layout.log(after)))
    return [s for s in seqs if s is not None]


def fetch_one(store: ObjectStore, layout: Layout, seq: int) -> Commit:
    try:
        data, _ = store.get(layout.log(seq))
    except ObjectNotFound:
        raise CorruptRemoteError(f"commit {seq} was listed but is gone (trimmed by gc?)",
                                 hint="sync again") from None
    return decode(seq, data)


def fetch(store: ObjectStore, layout: Layout, seqs: list[int], pool: ThreadPoolExecutor) -> list[Commit]:
    return list(pool.map(lambda seq: fetch_one(store, layout, seq), seqs))


def check_contiguous(seqs: list[int], after: int) -> None:
    for i, s in enumerate(seqs):
        if s != after + 1 + i:
            raise CorruptRemoteError(
                f"the remote log has a gap: expected commit {after + 1 + i}, found {s}",
                hint="run 'swamp datastore verify'")
