"""Retention (SYNC.md "Retention"): trim the log and the blobs.

- Commits older than the window go, but only up to the one before the
  newest checkpoint, so the log stays a contiguous, never empty suffix that
  some checkpoint continues; the newest checkpoint and those inside the
  window stay.
- The window is at least MIN_RETENTION_S and is measured on the server's
  clock only, which is what makes trimming safe for pushers (below).

Why gc never makes a seq that a pusher may still target creatable again.
A pusher whose head is ``h`` creates ``log/<h+1>`` create-only; that can
succeed on a seq gc deleted, and such a commit would be acknowledged yet
never applied (every other peer starts from a later checkpoint). A pusher
targets ``h+1`` only under the head-is-current rule (commit.py): within
HEAD_CURRENT_S of its own monotonic clock, it either listed the log after
``h`` and found nothing, or created ``log/<h>`` itself. (A listing after
a trimmed ``h`` is never empty: the commit at the newest checkpoint is
never trimmed. So a pusher standing on a trimmed head always pulls first.)
Either way ``log/<h+1>``, if it exists, was created after that moment, so
it is younger than HEAD_CURRENT_S (plus the time its own create may spend
in retries) whenever the pusher can still target it. gc deletes a commit
only if its Last-Modified is more than the retention older than the
Last-Modified of a write gc makes first (``gc/clock``): both times come
from the server's clock, so no peer's clock offset enters, and with the
retention at least MIN_RETENTION_S, longer than that trust and those
retries, no commit a pusher can still target is ever deleted. What is left
is a commit made on another chain by some other fault: its record names
its parent's id and every puller (and ``verify``) refuses it
(commitlog.check_chain).
- Blobs go in two phases. A blob no kept commit or checkpoint references is
  *marked* (``gc/mark.json`` records when it was first seen unreferenced);
  a later gc deletes it only if it is still unreferenced and was marked at
  least ``grace_s`` ago. A push uploads its blobs before it commits, so a
  grace longer than any push keeps the blobs it uploads safe. Marks are
  stamped, and their age read, on the server's clock (clocks.server_now,
  read after the blobs were listed, so a mark is never older than the
  upload it marks): a gc runner's own clock never shortens the grace.

A blob a push finds "already there" (412) may be an old one, marked long ago,
that a gc is about to sweep; the grace must count from the moment the push
relies on it, not from the mark. So ``gc/mark.json`` (written with If-Match,
always) is the fence between pushes and sweeps:

- before it commits, a push that got 412s calls ``protect``: it removes
  their marks (so a gc must mark them again and wait a whole grace), and
  checks that the ones it did not find marked still exist (a gc may have
  swept them after the 412), uploading again those that do not;
- a gc decides what to sweep from the marks it read and publishes that
  decision with If-Match on the same read: a push that unmarked a blob in
  between makes the write fail, and the gc decides again from the new marks;
- the decision names the blobs being swept (``sweep``), and the gc issues no
  delete later than SWEEP_WINDOW_S after publishing it. A push that finds one
  of its blobs in a sweep waits that long before it checks the blob. The gc
  removes ``sweep`` once done (a crashed gc's is ignored after a while);
- a sweep's start is the server's clock read just before it was decided
  (``serverStartedAt``), and the window is counted on the gc's monotonic
  clock from before that read, so every delete is sent before
  ``serverStartedAt + windowS`` on the server's clock. Another gc judges the
  record stale on the server's clock too, never on its own: a gc whose clock
  runs minutes ahead cannot take a live sweep for a dead one and erase it;
- and a push trusts no reused blob it has not seen exist after protecting
  it: every one is checked with a HEAD once its mark is removed (and any
  sweep naming it is waited out).
"""

from __future__ import annotations

import json
import time

from swamp.datastore.objectstore.base import ObjectStore
from swamp.errors import ObjectNotFound, PreconditionFailed, SwampError, ValidationError
from swamp.util import clock
from swamp.util.ids import uuid4_hex

from . import checkpoint, commitlog
from .clocks import PEER_SKEW_TOLERANCE_S, server_now
from .commitlog import HEAD_CURRENT_S
from .layout import Layout
from .pool import Pool

DEFAULT_GRACE_S = 24 * 3600.0
#: the shortest retention gc accepts: the HEAD_CURRENT_S (10 minutes) a
#: push may trust a listing, plus a commit request still being retried
#: (the retry layer gives up within minutes) and the coarseness of the
#: server's clock, rounded up to an hour
MIN_RETENTION_S = 3600.0
assert MIN_RETENTION_S > HEAD_CURRENT_S + 5 * 60
#: a gc issues no blob delete later than this after publishing its sweep
SWEEP_WINDOW_S = 60.0
#: what a push waits beyond the window (a delete request already in flight)
SWEEP_MARGIN_S = 10.0
#: a sweep record this much older than its window was left by a killed gc
STALE_SWEEP_S = 600.0
MARK_ATTEMPTS = 20


def _read_marks(store: ObjectStore, layout: Layout) -> tuple[dict, str | None]:
    """(the mark document, its ETag); None when no gc ever wrote one."""
    try:
        raw, etag = store.get(layout.gc_mark_key)
    except ObjectNotFound:
        return {"blobs": {}}, None
    doc = json.loads(raw)
    doc.setdefault("blobs", {})
    return doc, etag


def _write_marks(store: ObjectStore, layout: Layout, doc: dict, etag: str | None) -> str:
    """Compare-and-swap on the document read with ``etag``; PreconditionFailed
    when someone wrote it meanwhile."""
    body = json.dumps(doc).encode()
    if etag is None:
        return store.put(layout.gc_mark_key, body, if_none_match=True)
    return store.put(layout.gc_mark_key, body, if_match=etag)


def _live_sweep(doc: dict, server: float) -> dict | None:
    """The sweep record of ``doc`` unless it was left by a killed gc, judged
    at ``server`` (the server's clock, read before ``doc`` was)."""
    sweep = doc.get("sweep")
    if not sweep:
        return None
    window = float(sweep.get("windowS", SWEEP_WINDOW_S))
    started = sweep.get("serverStartedAt")
    allowance = window + STALE_SWEEP_S
    if not isinstance(started, (int, float)):
        # Written by an older swamp, with its own wall clock: allow for it.
        started, allowance = float(sweep.get("startedAt", 0)), allowance + PEER_SKEW_TOLERANCE_S
    return sweep if server - float(started) <= allowance else None


def _server_marks(doc: dict, server: float) -> dict[str, float]:
    """The marks of ``doc`` as times on the server's clock. A document an
    older swamp wrote holds times of its runners' own clocks: its marks
    start their grace again now (safe, and only once)."""
    if doc.get("clock") == "server":
        return dict(doc["blobs"])
    return {sha: server for sha in doc["blobs"]}


def protect(store: ObjectStore, layout: Layout, shas: set[str], pool: Pool) -> set[str]:
    """A push is about to commit referencing ``shas``, blobs it found already
    stored (412) instead of uploading. Clear their gc marks, and return those
    that a gc swept since (or is sweeping): the push must upload them again.

    Once its mark is removed no gc that read the mark can publish a sweep
    over our write (If-Match), and any later gc must mark it anew; a sweep
    that names it is waited out. Then every one of them is checked with a
    HEAD: the push relies only on blobs it saw exist after protecting them
    (a sweep record erased by a faulty peer cannot make it trust one)."""
    if not shas:
        return set()
    for _ in range(MARK_ATTEMPTS):
        doc, etag = _read_marks(store, layout)
        if etag is None:
            return set()  # no gc ever ran, so nothing was ever swept
        marks: dict = doc["blobs"]
        unmarked = shas & marks.keys()
        if unmarked:
            doc["blobs"] = {sha: t for sha, t in marks.items() if sha not in unmarked}
            try:
                _write_marks(store, layout, doc, etag)
            except PreconditionFailed:
                continue  # a gc or another push wrote it: look again
        break
    else:
        raise SwampError("could not protect reused blobs from a concurrent gc", code="push_contended",
                         hint="a gc and many pushes are busy on this datastore; try again")
    sweep = doc.get("sweep") or {}
    if shas & set(sweep.get("blobs", ())):
        # Being swept (or was, by a gc killed meanwhile): once its window is
        # over no delete is coming any more, and what is gone is gone.
        time.sleep(float(sweep.get("windowS", SWEEP_WINDOW_S)) + SWEEP_MARGIN_S)
    check = sorted(shas)
    there = pool.map(lambda sha: store.head(layout.blob(sha)) is not None, check)
    return {sha for sha, ok in zip(check, there) if not ok}


def check_retention(retention_days: float) -> float:
    """The retention in seconds; refused below MIN_RETENTION_S."""
    retention_s = float(retention_days) * 86400
    if not retention_s >= MIN_RETENTION_S:
        minimum = MIN_RETENTION_S / 86400
        raise ValidationError(
            f"a retention of {retention_days:g} days is shorter than the minimum, {minimum:.3f} days (one hour): "
            "a push may still be about to commit after a commit that young",
            hint=f"use --retention-days {minimum:.3f} or more")
    return retention_s


def gc(store: ObjectStore, layout: Layout, pool: Pool, *, retention_days: float = 30,
       grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False) -> dict:
    retention_s = check_retention(retention_days)
    # A dry run writes nothing: it estimates the server's clock with ours.
    now = clock.now() if dry_run else server_now(store, layout)
    cutoff = now - retention_s
    logs = [(layout.log_seq(m.key), m.last_modified) for m in store.list(layout.log_prefix)]
    logs = sorted((s, t) for s, t in logs if s is not None)
    ckpts = [(layout.checkpoint_seq(m.key), m.last_modified) for m in store.list(layout.checkpoint_prefix)]
    ckpts = sorted((s, t) for s, t in ckpts if s is not None)
    newest_ckpt = ckpts[-1][0] if ckpts else 0
    # The commit at the newest checkpoint stays, so the log is never empty
    # once something was committed: a peer whose head is at or before it
    # lists it and rebases from the checkpoint instead of believing it is
    # up to date (and committing at a trimmed seq).
    cut = min(max((s for s, t in logs if t < cutoff), default=0), max(0, newest_ckpt - 1))
    drop_logs = [s for s, _t in logs if s <= cut]
    drop_ckpts = [s for s, t in ckpts if t < cutoff and s != newest_ckpt]
    kept_logs = [s for s, _t in logs if s > cut]
    kept_ckpts = [s for s, _t in ckpts if s not in drop_ckpts]

    unreferenced = _unreferenced(store, layout, pool, kept_logs, kept_ckpts)
    if dry_run:
        doc = _read_marks(store, layout)[0]
        sweep, new_marks = _decide(unreferenced, _server_marks(doc, now), now, grace_s)
        return {"commitsDeleted": len(drop_logs), "checkpointsDeleted": len(drop_ckpts),
                "blobsDeleted": len(sweep), "blobsMarked": len(new_marks), "dryRun": True}

    # Oldest first, so the log is always a contiguous suffix.
    for seq in drop_logs:
        store.delete(layout.log(seq))
    for seq in drop_ckpts:
        store.delete(layout.checkpoint(seq))

    sweep_id = uuid4_hex()
    sweep, new_marks, deadline = _record_marks(store, layout, unreferenced, grace_s, sweep_id)

    # Sweep only once the decision is recorded, so a crash never forgets the
    # marks, and a push that relies on a blob being swept knows to wait.
    def sweep_one(sha: str) -> bool:
        if time.monotonic() >= deadline:
            return False  # too late: left for a later gc (unmarked: a fresh grace)
        store.delete(layout.blob(sha))
        return True

    deleted = sum(pool.map(sweep_one, sweep))
    if sweep:
        _end_sweep(store, layout, sweep_id)
    return {"commitsDeleted": len(drop_logs), "checkpointsDeleted": len(drop_ckpts),
            "blobsDeleted": deleted, "blobsMarked": len(new_marks), "dryRun": False}


def _unreferenced(store: ObjectStore, layout: Layout, pool: Pool, kept_logs: list[int],
                  kept_ckpts: list[int]) -> set[str]:
    """The blobs no kept commit or checkpoint names. Inline entries need no
    blob; a blob of the same content (uploaded by another commit) is kept
    all the same."""
    referenced: set[str] = set()
    for c in commitlog.fetch(store, layout, kept_logs, pool):
        referenced.update(ch.sha256 for ch in c.changes if ch.op == "put")
    for seq in kept_ckpts:
        tree, _rejected = checkpoint.fetch(store, layout, seq)
        referenced.update(sha for sha, _size, _data in tree.values())
    return {sha for sha in (layout.blob_sha(m.key) for m in store.list(layout.blob_prefix))
            if sha is not None and sha not in referenced}


def _decide(unreferenced: set[str], marks: dict, now: float, grace_s: float) -> tuple[list[str], dict]:
    """(the blobs to sweep: marked at least ``grace_s`` ago, the marks to keep)."""
    sweep = sorted(sha for sha in unreferenced if sha in marks and now - marks[sha] >= grace_s)
    return sweep, {sha: marks.get(sha, now) for sha in unreferenced if sha not in sweep}


def _record_marks(store: ObjectStore, layout: Layout, unreferenced: set[str], grace_s: float,
                  sweep_id: str) -> tuple[list[str], dict, float]:
    """Decide on the server's clock and record the marks (and the sweep
    about to run) compare-and-swap; (sweep, marks, the sweep's deadline on
    the monotonic clock)."""
    for _ in range(MARK_ATTEMPTS):
        # The window starts before the server's clock is read: every delete
        # is then sent before serverStartedAt + windowS on the server's clock.
        deadline = time.monotonic() + SWEEP_WINDOW_S
        server = server_now(store, layout)  # after the blobs were listed: no mark predates its upload
        doc, etag = _read_marks(store, layout)
        if _live_sweep(doc, server):
            raise SwampError("another gc is sweeping blobs right now; nothing was swept", code="gc_contended",
                             hint="run gc again in a minute")
        sweep, new_marks = _decide(unreferenced, _server_marks(doc, server), server, grace_s)
        new_doc = {"clock": "server", "time": server, "blobs": new_marks}
        if sweep:
            # startedAt (this runner's clock) is only for people reading it
            new_doc["sweep"] = {"id": sweep_id, "serverStartedAt": server, "startedAt": clock.now(),
                                "windowS": SWEEP_WINDOW_S, "blobs": sweep}
        try:
            _write_marks(store, layout, new_doc, etag)
            return sweep, new_marks, deadline
        except PreconditionFailed:
            continue  # a push unmarked blobs it relies on (or another gc ran): decide again
    raise SwampError("gc could not record its marks: the datastore is too busy; nothing was swept",
                     code="gc_contended", hint="run gc again")


def _end_sweep(store: ObjectStore, layout: Layout, sweep_id: str) -> None:
    for _ in range(MARK_ATTEMPTS):
        doc, etag = _read_marks(store, layout)
        if (doc.get("sweep") or {}).get("id") != sweep_id:
            return
        del doc["sweep"]
        try:
            _write_marks(store, layout, doc, etag)
            return
        except PreconditionFailed:
            continue
    # Left in place: pushes that reuse those blobs wait a minute until a
    # later gc finds the record stale.
