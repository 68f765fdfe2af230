"""Webhooks: ``--webhook NAME=WORKFLOW[:INPUT]`` lets a sender that knows a
shared secret start WORKFLOW with ``POST /hooks/NAME``.

The secret comes from the environment, ``SWAMP_WEBHOOK_<NAME>_SECRET``
(NAME upper-cased, ``-`` as ``_``), never from the command line (where any
user of the machine could read it). The sender signs the raw body:
``X-Swamp-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>``; a
missing or wrong signature is 401 and nothing runs. The JSON body is the
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


@dataclass(frozen=True)
class Webhook:
    name: str
    workflow: str
    input: str | None
    secret: bytes

    def verify(self, body: bytes, signature: str | None) -> bool:
        if not signature or not signature.startswith("sha256="):
            return False
        want = hmac.new(self.secret, body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(want, signature[len("sha256="):].strip().lower())


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


def sign(secret: str | bytes, body: bytes) -> str:
    """The signature header's value for ``body`` (for senders and tests)."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
