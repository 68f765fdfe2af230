"""Which remote a cache's sync state describes (SYNC.md "Remote identity").

The state in ``.sync/`` (head, bases, what was uploaded) is true of one
remote only. Pointed at another one (the namespace edited in .swamp.yaml,
the prefix emptied, a bucket restored from an older copy), it would skip
uploads of blobs that remote never had and commit on top of a log it never
held. So:

- the remote has an identity, ``identity.json`` (a random id), written
  create-only when it is first set up (``datastore setup``, or the first
  push to an empty namespace); the local state records it, and the highest
  seq it ever saw there (``seen``);
- every pull checks, from the one LIST it makes anyway (it starts one key
  early, so the record at ``head`` is listed with its ETag), that the log
  still reaches ``seen`` and that the commit at ``head`` is the very record
  this cache applied or created. A pull that must start from a checkpoint
  (the commit at ``head`` trimmed) or that starts from nothing reads the
  identity itself (one GET) and compares it;
- anything else is refused with RemoteChangedError, before anything is
  applied or published. ``datastore setup`` attaches again (``attach``):
  it forgets the old state and republishes this peer's own work, skipping
  nothing as "uploaded before", never its copies of other peers' work
  (origin.py).
"""

from __future__ import annotations

import json

from swamp.datastore.objectstore.base import ObjectStore
from swamp.errors import CorruptRemoteError, ObjectNotFound, PreconditionFailed, RemoteChangedError
from swamp.util import clock
from swamp.util.ids import uuid4_hex

from .commitlog import list_from, same_etag
from .layout import Layout

def read(store: ObjectStore, layout: Layout) -> str | None:
    """The remote's identity; None when it has none (empty, or set up by an
    older swamp)."""
    try:
        raw, _ = store.get(layout.identity_key)
    except ObjectNotFound:
        return None
    try:
        ident = json.loads(raw)["id"]
        if not isinstance(ident, str) or not ident:
            raise ValueError(ident)
        return ident
    except (ValueError, KeyError, TypeError):
        raise CorruptRemoteError(f"{layout.identity_key} is malformed") from None


def ensure(store: ObjectStore, layout: Layout) -> str:
    """The remote's identity, written now (create-only) if it has none."""
    ident = uuid4_hex()
    try:
        store.put(layout.identity_key, json.dumps({"id": ident, "createdAt": clock.isoformat()}).encode(),
                  if_none_match=True)
        return ident
    except PreconditionFailed:
        pass  # written once, by whoever came first
    ident = read(store, layout)
    if ident is None:  # deleted right after it was written: the remote is being emptied
        raise RemoteChangedError(f"{store.name}{layout.namespace} lost its identity while being set up")
    return ident


def check_listing(state, where: str, head: int, listed: dict[int, str], position=None) -> None:
    """No request: what the pull's LIST (from ``head``, with ETags) says.
    The log must reach the highest seq this cache saw, and the record at
    ``head`` must be the one this cache applied. ``position``: the state's
    ``position()``, when the caller has read it already."""
    top = max(listed, default=0)
    _head, seen, _tip_id, tip_etag = position or state.position()
    if top < seen:
        raise RemoteChangedError(
            f"the remote {where} ends at commit {top}, but this cache has seen commit {seen} there: "
            "it was emptied, reset, or is another remote")
    at_head = listed.get(head)
    if at_head is not None and tip_etag is not None and not same_etag(at_head, tip_etag):
        raise RemoteChangedError(
            f"commit {head} of the remote {where} is not the one this cache applied: "
            "the remote was emptied and written again, or is another remote")


def check_identity(state, store: ObjectStore, layout: Layout) -> None:
    """One GET: the remote's identity must be the one recorded (recorded
    now if this cache has none yet)."""
    remote = read(store, layout)
    mine = state.get_meta("remote")
    if mine is None:
        if remote is not None:
            state.set_meta("remote", remote)
        return
    if remote != mine:
        raise RemoteChangedError(
            f"the remote {store.name}{layout.namespace} is not the one this cache was set up with "
            f"(its identity is {remote or 'missing'}, this cache's is {mine})")


def claim(state, store: ObjectStore, layout: Layout) -> None:
    """Before the first push to an empty namespace: write its identity and
    record it."""
    ident = ensure(store, layout)
    mine = state.get_meta("remote")
    if mine is not None and mine != ident:
        raise RemoteChangedError(f"the remote {store.name}{layout.namespace} is not the one this cache "
                                 "was set up with")
    state.set_meta("remote", ident)


def attach(state, store: ObjectStore, layout: Layout, copies=None) -> bool:
    """``datastore setup``: make the remote's identity exist and the local
    state describe this remote. When the state describes another remote (or
    one that was emptied or went back), forget it, so the next pull and a
    full push republish what the remote lacks. ``copies()``: the files that
    are copies of other peers' work (origin.py), recorded in the same
    transaction, never republished. True if it was forgotten."""
    ident = ensure(store, layout)
    mine = state.get_meta("remote")
    stale = mine is not None and mine != ident
    if not stale and state.head > 0:
        try:
            check_listing(state, f"{store.name}{layout.namespace}", state.head,
                          list_from(store, layout, state.head))
        except RemoteChangedError:
            stale = True
    if stale:
        rows = copies() if copies is not None else []
        with state.transaction():
            state.forget_remote()
            state.set_copies(rows)
    state.set_meta("remote", ident)
    return stale
