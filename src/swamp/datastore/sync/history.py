"""Reading the log as the team's history: ``log`` (who changed what, when)
and ``verify`` (every referenced blob exists and matches its hash, every
inline content too; the log has no gaps, every record is well formed, and
every commit names as its parent the commit before it: an unbroken chain)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from swamp.datastore.objectstore.base import ObjectStore
from swamp.errors import CorruptRemoteError, ObjectNotFound

from . import checkpoint, commitlog
from .layout import CHAIN_FORMAT, Layout
from .pool import Pool
from .transfers import SMALL_FILE as STREAM_OVER  # a blob larger than this is verified streaming


def history(store: ObjectStore, layout: Layout, pool: Pool, limit: int | None = None) -> list[dict]:
    """Commits, newest first."""
    seqs = commitlog.list_seqs(store, layout, 0)
    if limit is not None:
        seqs = seqs[-limit:] if limit > 0 else []
    out = []
    for c in reversed(commitlog.fetch(store, layout, seqs, pool)):
        out.append({"seq": c.seq, "writer": c.writer, "time": c.time, "command": c.command,
                    "changes": [ch.to_json() for ch in c.changes]})
    return out


def verify(store: ObjectStore, layout: Layout, pool: Pool) -> dict:
    errors: list[str] = []
    seqs = commitlog.list_seqs(store, layout, 0)
    ckpts = checkpoint.seqs(store, layout)
    if seqs:
        try:
            commitlog.check_contiguous(seqs, seqs[0] - 1)
        except CorruptRemoteError as e:
            errors.append(e.message)
        if seqs[0] != 1 and not any(c >= seqs[0] - 1 for c in ckpts):
            errors.append(f"the log starts at {seqs[0]} but no checkpoint covers the commits before it")

    def load(seq: int) -> commitlog.Commit | str:
        try:
            return commitlog.fetch_one(store, layout, seq)
        except CorruptRemoteError as e:
            return e.message

    # Inline contents were checked against their hashes when their record
    # was read (a mismatch is an error above); only blobs are fetched.
    referenced: dict[str, str] = {}  # sha -> where it is referenced
    sizes: dict[str, int] = {}  # sha -> its size, as referenced
    inline = 0
    ids: dict[int, str] = {}  # seq -> commit id, from the records and the checkpoints
    links: list[tuple[int, str]] = []  # (seq, the parent id it names)
    for c in pool.map(load, seqs):
        if isinstance(c, str):
            errors.append(c)
            continue
        ids[c.seq] = c.id
        if c.format >= CHAIN_FORMAT and c.parent_id is not None:
            links.append((c.seq, c.parent_id))
        errors += [f"commit {c.seq} has an invalid path {p}" for p in c.rejected]
        for ch in c.changes:
            if ch.op == "put" and ch.inline is not None:
                inline += 1
            elif ch.op == "put":
                referenced.setdefault(ch.sha256, f"commit {c.seq} ({ch.path})")
                sizes[ch.sha256] = ch.size
    for seq in ckpts:
        try:
            tree, rejected, ckpt_id, _fenced = checkpoint.fetch_full(store, layout, seq)
        except CorruptRemoteError as e:
            errors.append(e.message)
            continue
        if ckpt_id is not None:
            if ids.setdefault(seq, ckpt_id) != ckpt_id:
                errors.append(f"checkpoint {seq} is the tree of commit {ckpt_id}, but commit {seq} is {ids[seq]}")
        errors += [f"checkpoint {seq} has an invalid path {p}" for p in rejected]
        for path, (sha, size, data) in tree.items():
            if data is None:
                referenced.setdefault(sha, f"checkpoint {seq} ({path})")
                sizes.setdefault(sha, size)
            else:
                inline += 1

    for seq, parent_id in links:
        if seq - 1 in ids and ids[seq - 1] != parent_id:
            errors.append(f"the chain is broken at commit {seq}: it extends commit {parent_id}, "
                          f"but commit {seq - 1} is {ids[seq - 1]} (a commit made on another chain)")
    errors += [e for e in pool.map(lambda item: _check_blob(store, layout, *item, sizes.get(item[0], 0)),
                                   sorted(referenced.items())) if e]
    return {"ok": not errors, "commits": len(seqs), "checkpoints": len(ckpts), "blobs": len(referenced),
            "inline": inline, "errors": errors}


def _check_blob(store: ObjectStore, layout: Layout, sha: str, where: str, size: int) -> str | None:
    """The error of the blob ``sha`` (referenced by ``where``), if any:
    missing, or not matching its hash."""
    try:
        if size > STREAM_OVER:
            # streamed through a scratch file, hashed on the way: a
            # large blob is never whole in memory
            import tempfile  # here: verify only, and its import costs every command ~1 ms

            with tempfile.TemporaryDirectory(prefix="swamp-verify-") as tmp:
                got = store.get_file(layout.blob(sha), Path(tmp) / "blob", size_hint=size).sha256
        else:
            got = hashlib.sha256(store.get(layout.blob(sha))[0]).hexdigest()
    except ObjectNotFound:
        return f"blob {sha} referenced by {where} is missing"
    if got != sha:
        return f"blob {sha} referenced by {where} does not match its hash"
    return None
