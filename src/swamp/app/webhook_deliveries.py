"""Webhook deliveries, recorded create-only so that a replayed request never
runs its workflow twice, whichever replica it reaches.

A delivery (the sender's id for one event) is recorded in one session
under the webhook's lease, ``webhook/<name>``: pull, look for
``webhooks/<name>/deliveries/<id>.json``, write it if absent, push. A
delivery seen before is refused with a ConflictError naming when it came.
The server refuses timestamps outside its window before it gets here, so a
record older than twice the window can never be matched again: those are
deleted in the same session.

A record whose push failed is no record: another replica, not seeing it,
would accept a replay of the same delivery. So it is taken back (deleted
from this cache, where it was never published) and the delivery is refused
as ``unavailable`` (serve: 503 with Retry-After), so that the sender
retries, and whichever replica the retry reaches records it once and runs
it."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from swamp.app.lifecycle import changing, is_published
from swamp.errors import ConflictError, NotRecordedError, UnpublishedError, ValidationError
from swamp.util import clock
from swamp.util.names import check_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo

DELIVERY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def lease_name(webhook: str) -> str:
    return f"webhook/{webhook}"


def delivery_dir(webhook: str) -> str:
    return f"webhooks/{webhook}/deliveries"


def check_delivery(delivery: str) -> str:
    if not DELIVERY_RE.match(delivery or "") or ".." in delivery:
        raise ValidationError(f"delivery id {delivery!r} is not valid",
                              hint="1 to 128 letters, digits, '_', '-', '.', ':' (a UUID will do)")
    return delivery


def record(repo: Repo, webhook: str, delivery: str, timestamp: int, *, window_s: float) -> bool:
    """Record ``delivery`` of ``webhook`` as received now: True once the
    record is published. Raises ConflictError if it was received before (on
    any replica), and NotRecordedError when its push failed (the record is
    taken back: nothing may run, the sender retries)."""
    check_name(webhook, "webhook name")
    check_delivery(delivery)
    ds = repo.datastore
    where = delivery_dir(webhook)
    path = f"{where}/{delivery}.json"
    now = clock.now()
    try:
        with changing(repo, f"webhook {webhook} delivery {delivery}", leases=[lease_name(webhook)]):
            if ds.exists(path):
                try:
                    seen = json.loads(ds.read_bytes(path)).get("receivedAt", "earlier")
                except ValueError:
                    seen = "earlier"
                raise ConflictError(f"delivery {delivery} of webhook {webhook} was already received ({seen}); "
                                    "it is not run again",
                                    hint="a new event needs a new X-Swamp-Delivery id; a sender retrying "
                                         "after a timeout can take this answer as 'received'")
            ds.write_bytes(path, json.dumps({"delivery": delivery, "timestamp": timestamp,
                                             "receivedAt": clock.isoformat(), "at": now}).encode())
            for name in ds.listdir(where):
                if not name.endswith(".json") or name == f"{delivery}.json":
                    continue
                try:
                    at = json.loads(ds.read_bytes(f"{where}/{name}")).get("at", now)
                except ValueError:
                    continue
                if now - float(at) > 2 * window_s:
                    ds.delete(f"{where}/{name}")
    except UnpublishedError as e:
        if is_published(ds, path):
            return True  # the commit landed; only what came after it failed
        if ds.exists(path):
            ds.delete(path)  # never published: take it back, so a retry anywhere is recorded once
        raise NotRecordedError(f"delivery {delivery} of webhook {webhook} could not be recorded in the shared "
                               f"datastore, so it is not run: {e.message}",
                               hint="send it again (same delivery id) in a moment: it is recorded and run once"
                               ) from e
    return True

