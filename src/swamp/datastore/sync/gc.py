"""Retention (SYNC.md "Retention"): trim the log and the blobs.

- Commits older than the window go, but only up to the newest checkpoint, so
  the log stays a contiguous suffix that some checkpoint continues; the
  newest checkpoint and those inside the window stay.
- Blobs go in two phases. A blob no kept commit or checkpoint references is
  *marked* (``gc/mark.json`` records when it was first seen unreferenced);
  a later gc deletes it only if it is still unreferenced and was marked at
  least ``grace_s`` ago. A push uploads its blobs before it commits, so a
  grace longer than any push keeps in-flight blobs safe, including a blob a
  push found "already there" (412) while it was merely marked.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from swamp.datastore.objectstore.base import ObjectNotFound, ObjectStore, PreconditionFailed
from swamp.errors import SwampError
from swamp.util import clock

from . import checkpoint, commitlog
from .layout import Layout

DEFAULT_GRACE_S = 24 * 3600.0


def gc(store: ObjectStore, layout: Layout, pool: ThreadPoolExecutor, *, retention_days: float = 30,
       grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False) -> dict:
    now = clock.now()
    cutoff = now - retention_days * 86400
    logs = [(layout.log_seq(m.key), m.last_modified) for m in store.list(layout.log_prefix)]
    logs = sorted((s, t) for s, t in logs if s is not None)
    ckpts = [(layout.checkpoint_seq(m.key), m.last_modified) for m in store.list(layout.checkpoint_prefix)]
    ckpts = sorted((s, t) for s, t in ckpts if s is not None)
    newest_ckpt = ckpts[-1][0] if ckpts else 0
    cut = min(max((s for s, t in logs if t < cutoff), default=0), newest_ckpt)
    drop_logs = [s for s, _t in logs if s <= cut]
    drop_ckpts = [s for s, t in ckpts if t < cutoff and s != newest_ckpt]
    kept_logs = [s for s, _t in logs if s > cut]
    kept_ckpts = [s for s, _t in ckpts if s not in drop_ckpts]

    referenced: set[str] = set()
    for c in commitlog.fetch(store, layout, kept_logs, pool):
        referenced.update(ch.sha256 for ch in c.changes if ch.op == "put")
    for seq in kept_ckpts:
        tree, _rejected = checkpoint.fetch(store, layout, seq)
        referenced.update(sha for sha, _size in tree.values())

    try:
        raw, etag = store.get(layout.gc_mark_key)
        marks: dict[str, float] = json.loads(raw)["blobs"]
    except ObjectNotFound:
        marks, etag = {}, None
    unreferenced = {sha for sha in (layout.blob_sha(m.key) for m in store.list(layout.blob_prefix))
                    if sha is not None and sha not in referenced}
    sweep = sorted(sha for sha in unreferenced if sha in marks and now - marks[sha] >= grace_s)
    new_marks = {sha: marks.get(sha, now) for sha in unreferenced if sha not in sweep}
    report = {"commitsDeleted": len(drop_logs), "checkpointsDeleted": len(drop_ckpts),
              "blobsDeleted": len(sweep), "blobsMarked": len(new_marks), "dryRun": dry_run}
    if dry_run:
        return report

    # Oldest first, so the log is always a contiguous suffix.
    for seq in drop_logs:
        store.delete(layout.log(seq))
    for seq in drop_ckpts:
        store.delete(layout.checkpoint(seq))
    body = json.dumps({"time": now, "blobs": new_marks}).encode()
    try:
        if etag is None:
            store.put(layout.gc_mark_key, body, if_none_match=True)
        else:
            store.put(layout.gc_mark_key, body, if_match=etag)
    except PreconditionFailed:
        raise SwampError("another gc ran at the same time; nothing was swept", code="gc_contended",
                         hint="run gc again") from None
    # Sweep only once the new marks are recorded, so a crash never forgets them.
    list(pool.map(lambda sha: store.delete(layout.blob(sha)), sweep))
    return report
