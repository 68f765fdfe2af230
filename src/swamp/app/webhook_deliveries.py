"""Webhook deliveries, recorded create-only so that a replayed request never
runs its workflow twice, whichever replica it reaches.

A delivery (the sender's id for one event) is recorded in one session
under the webhook's lease, ``webhook/<name>``: pull, look for
``webhooks/<name>/deliveries/<id>.json``, write it if absent, push. A
delivery seen before is refused with a ConflictError naming when it came.
The server refuses timestamps outside its window before it gets here, so a
record older than twice the window can never be matched again: those are
deleted in the same session."""

from __future__ import annotations

import json
import re

from swamp.app.lifecycle import changing
from swamp.errors import ConflictError, UnpublishedError, ValidationError
from swamp.util import clock
from swamp.util.names import check_name

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


def record(repo, webhook: str, delivery: str, timestamp: int, *, window_s: float) -> bool:
    """Record ``delivery`` of ``webhook`` as received now. Raises
    ConflictError if it was received before (on any replica). Returns False
    when it is recorded here but its push failed (a peer may not see it yet)."""
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
    except UnpublishedError:
        return False
    return True
