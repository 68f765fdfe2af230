"""Whose clock the protocol reads (docs/sync.md "Clocks").

Peers' wall clocks disagree: by seconds, by minutes on a laptop back from
sleep, and by up to 15 minutes on a peer S3 still serves (request signing
refuses more). So a time that two machines compare is read on one clock,
the object store's: the Last-Modified the server stamps on what it
stores. ``server_now`` reads that clock now, from a write of our own.

Where a wall clock stamped by a peer must still be compared (records
written by an older swamp), the comparison allows PEER_SKEW_TOLERANCE_S:
the largest skew the store accepts, twice over. Durations measured by one
process (a lease's ttl, a sweep's window) use its monotonic clock, where
only the rate counts, never an offset."""

from __future__ import annotations

import json

from swamp.datastore.objectstore.base import ObjectStore
from swamp.errors import SwampError
from swamp.util import clock

from .layout import Layout

#: the largest clock skew S3 request signing accepts (a peer further off
#: gets 403 RequestTimeTooSkewed and cannot write at all)
STORE_MAX_SKEW_S = 15 * 60.0
#: what a comparison of a peer's wall clock with another's allows
PEER_SKEW_TOLERANCE_S = 2 * STORE_MAX_SKEW_S


def server_now(store: ObjectStore, layout: Layout) -> float:
    """The server's clock now: the Last-Modified of a write we make
    (``gc/clock``): a time between this call's start and its end, on the
    server's clock."""
    store.put(layout.gc_clock_key, json.dumps({"time": clock.isoformat()}).encode())
    meta = store.head(layout.gc_clock_key)
    if meta is None:  # deleted at once by someone: read it from the listing instead
        meta = next(iter(store.list(layout.gc_clock_key)), None)
    if meta is None:
        raise SwampError("gc could not read the server's clock; nothing was trimmed", code="gc_contended",
                         hint="run gc again")
    return meta.last_modified
