"""Commit records: ``log/<seq>.json``, created create-only. Creating log/N is
the single commit point of the protocol; everything else is derived.

Every record read from the remote is validated before anything touches the
disk: its seq and parent, and every path (no '..', not absolute, no NUL, no
backslash). A change to a path that must never be synced is rejected, not
applied, and reported.

Small contents travel inline. A put change is
``{path, op: "put", sha256, size}`` and its content is the blob
``blobs/<sha256>``, except when the entry also has ``data``: then ``data``
is the content itself (standard base64) and no blob is written for it. A
pusher inlines a file of at most INLINE_MAX bytes (INLINE_MAX_LAZY for the
contents a lazily hydrated cache fetches only when read: inline, they are
in every pull) while the commit's inline contents stay within INLINE_TOTAL;
anything larger, or past the total, is a blob as before. Why: a workflow
step writes about six small files, and a blob PUT each was most of a step's
requests; inline, the commit record
carries them for the price of the one PUT that commits. A content is
carried once per record: other entries with the same sha256 and no
``data`` take it from the entry that has it. A puller takes the
content from the record (its sha256 and size are checked when the record
is read, a mismatch is a corrupt remote) and makes no GET for it. Records
without ``data`` (older peers) are read as before. Checkpoints carry the
same contents inline (checkpoint.py), so gc trimming the log never loses
them; gc keeps every blob any kept record names and never expects one for
an inline entry; verify checks inline contents against their hashes. A
remote whose format.json says version 1 was set up by a peer that does not
read ``data``: nothing is inlined there (layout.INLINE_FORMAT).

The chain. Every record has a random ``id``; a record of format 3 or later
(``"format": 3``) also names ``parentId``, the id of the commit at
``seq - 1`` that its pusher had applied (null only for seq 1). A puller
checks every link before it applies anything (``check_chain``): a commit
whose parent id is not the id of the commit it would apply onto was made
on another chain (a trimmed seq, a replaced remote) and is refused as a
corrupt remote, never applied. A record without ``format`` was written by
an older swamp: it names only its parent's seq, so the link into it cannot
be checked, and its own id is the parent the next one names.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from typing import TYPE_CHECKING

from swamp.datastore.objectstore.base import ObjectStore
from swamp.errors import CorruptRemoteError, ObjectNotFound, ValidationError
from swamp.util.ids import hostname
from swamp.util.names import check_rel_path

if TYPE_CHECKING:
    from .pool import Pool

#: How long a command may trust that the log continues from its head: a
#: push commits at head+1 only if its engine saw that this recently (else it
#: pulls first), and gc never trims commits younger than this (with margin),
#: so a seq a pusher may still target is never made creatable again.
HEAD_CURRENT_S = 600.0

from .layout import CHAIN_FORMAT, SHA_RE, Layout
from .localonly import is_synced


#: An upgrade record (``"upgrade": <format>``, written by
#: ``SyncEngine.upgrade_format`` on a remote of format 1) carries one entry
#: of this op: no older swamp knows it, so an older reader refuses the
#: record as malformed, naming this text, before it applies anything (a
#: format 1 reader would take inline contents for missing blobs, and a
#: lazily hydrated one would even build on them and write checkpoints that
#: drop them). Readers of this version skip the entry.
UPGRADE_PATH = ".swamp-sync-upgrade"
UPGRADE_OP = "sync-format-upgrade: this datastore now needs a newer swamp, upgrade swamp"

#: a file up to this size travels inline in the commit record
INLINE_MAX = 64 << 10
#: the same for the contents a lazily hydrated cache fetches on first read
INLINE_MAX_LAZY = 8 << 10
#: inline contents of one commit, at most (the record stays a small GET)
INLINE_TOTAL = 4 << 20


class Change:
    """One entry of a commit: immutable, compared and hashed by (path, op,
    sha256, size), as a frozen dataclass would be (a plain class: creating a
    dataclass costs every command that opens the engine ~0.5 ms, and the
    dataclasses module loads inspect)."""

    __slots__ = ("path", "op", "sha256", "size", "inline")
    path: str
    op: str  # "put" | "delete"
    sha256: str | None
    size: int
    #: the content, when the record carries it inline (no blob); not in ==, hash or repr
    inline: bytes | None

    def __init__(self, path: str, op: str, sha256: str | None = None, size: int = 0,
                 inline: bytes | None = None) -> None:
        _set = object.__setattr__
        _set(self, "path", path)
        _set(self, "op", op)
        _set(self, "sha256", sha256)
        _set(self, "size", size)
        _set(self, "inline", inline)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        return f"Change(path={self.path!r}, op={self.op!r}, sha256={self.sha256!r}, size={self.size!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.path, self.op, self.sha256, self.size) == (other.path, other.op, other.sha256, other.size)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.path, self.op, self.sha256, self.size))

    def __reduce__(self):
        return (Change, (self.path, self.op, self.sha256, self.size, self.inline))

    def to_json(self) -> dict:
        """The entry as ``datastore log`` shows it (without the content)."""
        out = {"path": self.path, "op": self.op, "sha256": self.sha256, "size": self.size}
        if self.inline is not None:
            out["inline"] = True
        return out

    def encode(self, with_data: bool = True) -> dict:
        out = {"path": self.path, "op": self.op, "sha256": self.sha256, "size": self.size}
        if self.inline is not None and with_data:
            out["data"] = base64.b64encode(self.inline).decode("ascii")
        return out


def decode_inline(path: str, sha256: str, size: int, data: object) -> bytes:
    """The inline content of an entry, checked against its hash and size."""
    if not isinstance(data, str):
        raise ValueError(f"bad inline data for {path!r}")
    raw = base64.b64decode(data, validate=True)
    if len(raw) != size or hashlib.sha256(raw).hexdigest() != sha256:
        raise ValueError(f"the inline content of {path!r} does not match its hash")
    return raw


class Commit:
    """One record of the log. A plain class with a dataclass's constructor,
    ``==`` (all fields) and repr, and like a mutable dataclass unhashable."""

    seq: int
    parent: int
    id: str
    writer: dict
    time: str
    command: str
    changes: list[Change]
    #: paths in the record that failed validation (never applied)
    rejected: list[str]
    #: the id of the commit at ``seq - 1`` this one extends (None: seq 1)
    parent_id: str | None
    #: the record's format: CHAIN_FORMAT when it names its parent's id,
    #: 0 for an older record (no ``parentId``: the link cannot be checked)
    format: int
    #: lease name -> the nonce of the holding under which its paths were
    #: written (fencing: a commit under a holding fenced earlier is ignored)
    leases: dict[str, str]
    #: an epoch record (no changes): ``{"lease", "from", "holder"}``, the
    #: holding ``from`` was taken over (or broken) and is fenced from here on
    fence: dict | None
    #: an upgrade record (no changes): the sync format the remote moves to
    #: here; from this commit on, contents may travel inline
    upgrade: int | None

    _FIELDS = ("seq", "parent", "id", "writer", "time", "command", "changes", "rejected", "parent_id", "format",
               "leases", "fence", "upgrade")

    def __init__(self, seq: int, parent: int, id: str, writer: dict, time: str, command: str,
                 changes: list[Change], rejected: list[str] | None = None, parent_id: str | None = None,
                 format: int = CHAIN_FORMAT, leases: dict[str, str] | None = None, fence: dict | None = None,
                 upgrade: int | None = None) -> None:
        self.seq = seq
        self.parent = parent
        self.id = id
        self.writer = writer
        self.time = time
        self.command = command
        self.changes = changes
        self.rejected = [] if rejected is None else rejected
        self.parent_id = parent_id
        self.format = format
        self.leases = {} if leases is None else leases
        self.fence = fence
        self.upgrade = upgrade

    def __repr__(self) -> str:
        return "Commit(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass with eq

    @property
    def peer(self) -> str:
        return str(self.writer.get("peer", "?"))

    def encode(self) -> bytes:
        sent: set[str | None] = set()
        changes = []
        for c in self.changes:
            changes.append(c.encode(with_data=c.sha256 not in sent))
            if c.inline is not None:
                sent.add(c.sha256)
        body = {
            "format": CHAIN_FORMAT, "seq": self.seq, "parent": self.parent, "parentId": self.parent_id,
            "id": self.id, "writer": self.writer, "time": self.time, "command": self.command, "changes": changes,
        }
        if self.leases:
            body["leases"] = self.leases
        if self.fence is not None:
            body["fence"] = self.fence
        if self.upgrade is not None:
            body["upgrade"] = self.upgrade
            body["changes"] = [{"path": UPGRADE_PATH, "op": UPGRADE_OP, "sha256": None, "size": 0}]
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    def inline_bytes(self) -> int:
        """Bytes of content the record carries (each content once)."""
        return sum(len(data) for data in {c.sha256: c.inline for c in self.changes
                                          if c.inline is not None}.values())


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
        fmt = d.get("format", 0)
        if not isinstance(fmt, int) or fmt < 0:
            raise ValueError(f"bad format {fmt!r}")
        parent_id = d.get("parentId") if fmt >= CHAIN_FORMAT else None
        if fmt >= CHAIN_FORMAT:
            if not isinstance(d.get("id"), str) or not d["id"]:
                raise ValueError("no id")
            if not (isinstance(parent_id, str) and parent_id) and not (parent_id is None and seq == 1):
                raise ValueError(f"no parent id in a format {fmt} record")
        upgrade = d.get("upgrade")
        if upgrade is not None and (not isinstance(upgrade, int) or isinstance(upgrade, bool) or upgrade < 2):
            raise ValueError(f"bad upgrade {upgrade!r}")
        changes, rejected = [], []
        for c in d["changes"]:
            if upgrade is not None and c.get("op") == UPGRADE_OP:
                continue  # what refuses older readers: not a change
            if not valid_path(c.get("path")):
                rejected.append(repr(c.get("path")))
                continue
            if c["op"] == "put":
                if not isinstance(c["sha256"], str) or not SHA_RE.match(c["sha256"]):
                    raise ValueError(f"bad sha256 for {c['path']!r}")
                inline = (decode_inline(c["path"], c["sha256"], int(c["size"]), c["data"])
                          if c.get("data") is not None else None)
                changes.append(Change(c["path"], "put", c["sha256"], int(c["size"]), inline))
            elif c["op"] == "delete":
                changes.append(Change(c["path"], "delete"))
            else:
                raise ValueError(f"bad op {c['op']!r}")
        # A content is carried once per record: the other entries with the
        # same sha256 take it from there.
        carried = {ch.sha256: ch.inline for ch in changes if ch.inline is not None}
        changes = [Change(ch.path, ch.op, ch.sha256, ch.size, carried[ch.sha256])
                   if ch.op == "put" and ch.inline is None and ch.sha256 in carried else ch for ch in changes]
        leases = d.get("leases") or {}
        if not isinstance(leases, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in leases.items()):
            raise ValueError("bad leases")
        fence = d.get("fence")
        if fence is not None and not (isinstance(fence, dict) and isinstance(fence.get("lease"), str)
                                      and isinstance(fence.get("from"), str)):
            raise ValueError("bad fence")
        return Commit(seq, d["parent"], str(d.get("id", "")), dict(d.get("writer") or {}),
                      str(d.get("time", "")), str(d.get("command", "")), changes, rejected, parent_id,
                      fmt if fmt >= CHAIN_FORMAT else 0, leases, fence, upgrade)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as e:
        raise CorruptRemoteError(f"commit {seq} is malformed: {e}",
                                 hint="run 'swamp datastore verify'") from None


def list_seqs(store: ObjectStore, layout: Layout, after: int) -> list[int]:
    """Commit seqs after ``after``: one LIST with a start-after key."""
    seqs = (layout.log_seq(m.key) for m in store.list(layout.log_prefix, start_after=layout.log(after)))
    return [s for s in seqs if s is not None]


def list_from(store: ObjectStore, layout: Layout, head: int) -> dict[int, str]:
    """seq -> ETag of the commits from ``head`` on (``head`` itself when it
    is still there): the same one LIST as ``list_seqs``, started one key
    earlier, so a pull also sees that the commit it stands on is still the
    record it applied (identity.py)."""
    start = layout.log(head - 1) if head > 0 else None
    out = {}
    for m in store.list(layout.log_prefix, start_after=start):
        seq = layout.log_seq(m.key)
        if seq is not None and seq >= head:
            out[seq] = m.etag
    return out


def same_etag(a: str | None, b: str | None) -> bool:
    """ETags as different answers quote them (S3 quotes, listings may not)."""
    def norm(e: str) -> str:
        return e.removeprefix("W/").strip('"')
    return a is not None and b is not None and norm(a) == norm(b)


def check_chain(commits: list[Commit], parent_id: str | None, parent_seq: int) -> None:
    """Each commit must extend the one before it: ``parent_id`` is the id of
    the commit at ``parent_seq`` the first one applies onto (None: unknown,
    or nothing before seq 1). A broken link is a CorruptRemoteError: the
    commit was made on another chain (a seq gc had trimmed, a remote that
    was replaced), so nothing from this pull is applied."""
    prev_id, prev_seq = parent_id, parent_seq
    for c in commits:
        if c.format >= CHAIN_FORMAT and prev_id is not None and c.parent_id != prev_id:
            raise CorruptRemoteError(
                f"the remote log is broken at commit {c.seq}: it extends a commit {c.parent_id} "
                f"but commit {prev_seq} here is {prev_id}; it was made on another chain "
                "(a trimmed seq, or a remote that was replaced) and is not applied",
                hint="run 'swamp datastore verify'; if the remote was emptied or replaced, attach again "
                     "with 'swamp datastore setup ...'")
        prev_id, prev_seq = c.id or None, c.seq


def fetch_one(store: ObjectStore, layout: Layout, seq: int) -> Commit:
    try:
        data, _ = store.get(layout.log(seq))
    except ObjectNotFound:
        raise CorruptRemoteError(f"commit {seq} was listed but is gone (trimmed by gc?)",
                                 hint="sync again") from None
    return decode(seq, data)


def fetch(store: ObjectStore, layout: Layout, seqs: list[int], pool: Pool) -> list[Commit]:
    return list(pool.map(lambda seq: fetch_one(store, layout, seq), seqs))


def check_contiguous(seqs: list[int], after: int) -> None:
    for i, s in enumerate(seqs):
        if s != after + 1 + i:
            raise CorruptRemoteError(
                f"the remote log has a gap: expected commit {after + 1 + i}, found {s}",
                hint="run 'swamp datastore verify'")



#: lease name -> {fenced holding nonce: seq of the epoch record that fenced it}
Fenced = dict[str, dict[str, int]]


def fenced_out(commit: Commit, fenced: Fenced) -> bool:
    """The one rule every peer applies, the same way: a commit made under a
    lease holding that an epoch record earlier in the log fenced (the lease
    was taken over from it, or broken by force) is ignored, its changes
    applied by no one. The holder that took over is never the one refused:
    its epoch record comes before any work of its own."""
    return any(fenced.get(name, {}).get(nonce, commit.seq) < commit.seq for name, nonce in commit.leases.items())


def add_fence(commit: Commit, fenced: Fenced) -> None:
    """Take ``commit``'s epoch record, if it is one, into ``fenced``."""
    if commit.fence is not None:
        fenced.setdefault(commit.fence["lease"], {}).setdefault(commit.fence["from"], commit.seq)
