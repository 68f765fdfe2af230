"""Checkpoints: the full tree as of a commit, ``checkpoints/<seq>.json.gz``,
written create-only by the peer whose commit lands on a multiple of K. A new
peer (or one whose head the retention window dropped) starts from the newest
one and replays the log after it.

A file whose content a commit carried inline (commitlog.py) is carried
inline here too, ``[sha256, size, base64]``, instead of ``[sha256, size]``:
once gc trims that commit, the checkpoint is the only record of it. (The
other way, uploading a blob for each such file when writing the checkpoint,
would cost the writer one PUT per small file every K commits, the requests
inlining saves.) Only up to commit.CHECKPOINT_INLINE_TOTAL of them, though:
the writer stores the rest as blobs first, so a checkpoint stays one
bounded GET however many small files the datastore holds.

A checkpoint also names the id of its commit (``"id"``), the parent id the
first commit after it names (commitlog.py "The chain"); an older checkpoint
has none, and the puller reads the id from the commit itself."""

from __future__ import annotations

import base64
import binascii
import json

from swamp.datastore.objectstore.base import ObjectStore
from swamp.errors import CorruptRemoteError, ObjectNotFound, PreconditionFailed

from .commitlog import decode_inline, valid_path
from .layout import SHA_RE, Layout

#: path -> (sha256, size, the content when carried inline, else None)
Tree = dict[str, tuple[str, int, bytes | None]]


def _entry(sha: str, size: int, data: bytes | None) -> list:
    return [sha, size] if data is None else [sha, size, base64.b64encode(data).decode("ascii")]


def encode(seq: int, tree: Tree, commit_id: str | None = None, fenced: dict | None = None) -> bytes:
    body = {"seq": seq, "id": commit_id, "files": {p: _entry(*v) for p, v in sorted(tree.items())}}
    if fenced:
        body["fenced"] = fenced  # the log's fenced lease holdings as of this commit (commitlog.fenced_out)
    import gzip  # here: only a checkpoint needs it

    return gzip.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"), mtime=0)


def decode(seq: int, data: bytes) -> tuple[Tree, list[str]]:
    """The tree and the rejected (invalid) paths."""
    tree, rejected, _id, _fenced = decode_full(seq, data)
    return tree, rejected


def decode_full(seq: int, data: bytes) -> tuple[Tree, list[str], str | None, dict]:
    """The tree, the rejected (invalid) paths, the id of the commit it is
    the tree of (None in a checkpoint from before the chain), and the
    fenced lease holdings as of that commit."""
    try:
        import gzip

        body = json.loads(gzip.decompress(data))
        if body["seq"] != seq:
            raise ValueError(f"seq {body['seq']} in checkpoint {seq}")
        tree: Tree = {}
        rejected = []
        for path, entry in body["files"].items():
            sha, size = entry[0], int(entry[1])
            if not valid_path(path):
                rejected.append(repr(path))
            elif not SHA_RE.match(sha):
                raise ValueError(f"bad sha256 for {path!r}")
            else:
                data = decode_inline(path, sha, size, entry[2]) if len(entry) > 2 else None
                tree[path] = (sha, size, data)
        commit_id = body.get("id")
        if commit_id is not None and not isinstance(commit_id, str):
            raise ValueError(f"bad id {commit_id!r}")
        fenced = body.get("fenced") or {}
        if not isinstance(fenced, dict) or not all(isinstance(v, dict) for v in fenced.values()):
            raise ValueError("bad fenced")
        return tree, rejected, commit_id or None, {k: {n: int(q) for n, q in v.items()} for k, v in fenced.items()}
    except (ValueError, KeyError, TypeError, IndexError, OSError, EOFError, binascii.Error) as e:
        raise CorruptRemoteError(f"checkpoint {seq} is malformed: {e}") from None


def seqs(store: ObjectStore, layout: Layout) -> list[int]:
    found = (layout.checkpoint_seq(m.key) for m in store.list(layout.checkpoint_prefix))
    return sorted(s for s in found if s is not None)


def fetch(store: ObjectStore, layout: Layout, seq: int) -> tuple[Tree, list[str]]:
    tree, rejected, _id, _fenced = fetch_full(store, layout, seq)
    return tree, rejected


def fetch_full(store: ObjectStore, layout: Layout, seq: int) -> tuple[Tree, list[str], str | None, dict]:
    try:
        data, _ = store.get(layout.checkpoint(seq))
    except ObjectNotFound:
        raise CorruptRemoteError(f"checkpoint {seq} was listed but is gone", hint="sync again") from None
    return decode_full(seq, data)


def write(store: ObjectStore, layout: Layout, seq: int, tree: Tree, commit_id: str | None = None,
          fenced: dict | None = None) -> None:
    try:
        store.put(layout.checkpoint(seq), encode(seq, tree, commit_id, fenced), if_none_match=True)
    except PreconditionFailed:
        pass  # someone wrote it already; checkpoints of one seq are identical
