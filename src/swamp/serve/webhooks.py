"""Webhooks: ``--webhook NAME=WORKFLOW[:INPUT]`` lets a sender that knows a
shared secret start WORKFLOW with ``POST /hooks/NAME``.

The secret comes from the environment, ``SWAMP_WEBHOOK_<NAME>_SECRET``
(NAME upper-cased, ``-`` as ``_``), never from the command line (where any
user of the machine could read it). Each request carries
``X-Swamp-Timestamp`` (Unix seconds), ``X-Swamp-Delivery`` (the sender's
unique id for this event) and ``X-Swamp-Signature-256: sha256=<hex
HMAC-SHA256(secret, "<name>.<timestamp>.<delivery>." + body)>``: the
webhook's name is signed, so a delivery to one webhook is not accepted by
another that shares its secret; the timestamp is ASCII digits only. A missing or
wrong signature is 401 and nothing runs; so is a timestamp more than
WINDOW_S seconds away from the server's clock; a delivery id already
received (on any replica: app/webhook_deliveries.py) is 409. The JSON body is the
run's inputs (an object), or, with ``:INPUT``, the value of that one input
(any JSON). The run starts in the background: the answer is 202 at once,
and the run is in the workflow's history like any other."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from dataclasses import dataclass

from swamp.errors import UsageError
from swamp.util.names import check_name

HEADER = "x-swamp-signature-256"
TIMESTAMP = "x-swamp-timestamp"
DELIVERY = "x-swamp-delivery"
#: how far a request's timestamp may be from the server's clock, either way
WINDOW_S = 300


@dataclass(frozen=True)
class Webhook:
    name: str
    workflow: str
    input: str | None
    secret: bytes

    def verify(self, body: bytes, signature: str | None, timestamp: str | None, delivery: str | None) -> bool:
        if not signature or not signature.startswith("sha256=") or not timestamp or not delivery:
            return False
        if not (timestamp.isascii() and timestamp.isdigit()):
            return False
        want = hmac.new(self.secret, signed_bytes(self.name, timestamp, delivery, body), hashlib.sha256).hexdigest()
        return hmac.compare_digest(want, signature[len("sha256="):].strip().lower())


def signed_bytes(webhook: str, timestamp: str, delivery: str, body: bytes) -> bytes:
    """What the signature covers. A webhook name has no dot and a timestamp
    only digits, so the fields cannot be shifted into one another."""
    return f"{webhook}.{timestamp}.{delivery}.".encode() + body


def secret_variable(name: str) -> str:
    return "SWAMP_WEBHOOK_" + re.sub(r"[^A-Z0-9]", "_", name.upper()) + "_SECRET"


def parse(spec: str, env=os.environ) -> Webhook:
    name, sep, target = spec.partition("=")
    if not sep or not target:
        raise UsageError(f"--webhook {spec!r} must be NAME=WORKFLOW or NAME=WORKFLOW:INPUT")
    check_name(name, "webhook name")
    workflow, _, input_name = target.partition(":")
    var = secret_variable(name)
    secret = env.get(var, "")
    if len(secret) < 16:
        raise UsageError(f"webhook {name}: set its shared secret (16 characters or more) in ${var}",
                         hint=f"e.g. export {var}=$(openssl rand -hex 32)")
    return Webhook(name, workflow, input_name or None, secret.encode())


def sign(secret: str | bytes, body: bytes, timestamp: str = "", delivery: str = "", *, webhook: str) -> str:
    """The signature header's value of a delivery to ``webhook`` (for senders and tests)."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, signed_bytes(webhook, timestamp, delivery, body), hashlib.sha256).hexdigest()


def signed_headers(secret: str | bytes, body: bytes, *, webhook: str, timestamp: int | None = None,
                   delivery: str | None = None) -> dict:
    """The three headers of a delivery of ``body``: now, a new id (for
    senders and tests)."""
    import time
    import uuid

    ts = str(int(time.time()) if timestamp is None else timestamp)
    delivery = delivery or str(uuid.uuid4())
    return {"X-Swamp-Timestamp": ts, "X-Swamp-Delivery": delivery,
            "X-Swamp-Signature-256": sign(secret, body, ts, delivery, webhook=webhook)}
