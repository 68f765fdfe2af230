"""Worker enrolment tokens (docs/workers.md, "Enrolling with a token"): a
one-time, expiring secret that a new worker machine exchanges for its team
certificate through the shared datastore, so nobody copies key files by
hand and the CA's key never leaves the CA holder's machine.

``swamp worker token create NAME`` (where the CA's key is) issues the
certificate NAME at once and seals it, with its key and the CA's
certificate, under a key derived from a fresh random token. The datastore
gets one document, ``worker-tokens/NAME.json``: the token's SHA-256 (never
the token), who made it and when it expires, and the sealed bundle, which
nobody can open without the token. The token is shown once.

``swamp worker enrol`` (or ``worker start --token``) on the new machine
finds the document whose hash is the token's, opens the bundle, installs
the files in its team-certs folder and, in the same session under the
token's lease, marks the token used (who, when) and deletes the bundle:
a second use, and any use after ``revoke`` or past the expiry, is refused
with what happened to the token. ``revoke`` deletes the bundle and records
who revoked it.

The sealed bundle is AES-256-GCM under HKDF-SHA256(token); the document's
name, hash and expiry are its associated data, so a bundle moved to another
token's document, or given a later expiry there, does not open.

What a token does not stop: whoever holds both a pending token and read
access to the datastore can open its bundle without telling the datastore;
``enrol`` marks a token used, and ``revoke`` deletes the bundle, for every
honest client. Treat a token as the certificate it opens until it is used
or revoked (docs/workers.md)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Callable

from swamp.app.lifecycle import changing, reading
from swamp.errors import ConflictError, NotFoundError, TokenRefusedError, UnpublishedError, UsageError, ValidationError
from swamp.util import actors, clock

FOLDER = "worker-tokens"
PREFIX = "swamp-enrol-"
_INFO = b"swamp worker enrolment v1"


def path_of(name: str) -> str:
    return f"{FOLDER}/{name}.json"


def lease_of(name: str) -> str:
    return f"worker-token/{name}"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(repo, name: str, pems: dict, *, seconds: int) -> dict:
    """Store a new token for the bundle ``pems`` (team_certs.issue_pems);
    refused when NAME has a token that can still be used. Returns the
    token's row and, once, the token itself."""
    token = PREFIX + secrets.token_urlsafe(32)
    now = clock.now()
    with changing(repo, f"worker token create {name}", leases=[lease_of(name)]):
        old = _read(repo.datastore, name)
        if old is not None and _state(old, now) == "pending":
            raise ConflictError(f"worker token {name!r} exists and can still be used",
                                hint=f"revoke it first ('swamp worker token revoke {name}'), or choose another name")
        expires_at = clock.isoformat(now + seconds)
        doc = {"name": name, "sha256": digest(token), "createdAt": clock.isoformat(now),
               "createdBy": actors.local_user(), "expiresAt": expires_at,
               "caSha256": pems["caSha256"], "certificateSha256": pems["sha256"],
               "sealed": _seal(token, name, expires_at, pems)}
        _write(repo.datastore, name, doc)
    return {**_row(doc, now), "token": token}


def list_tokens(repo) -> list[dict]:
    """Every token's row, by name: its state, expiry and who made, used or
    revoked it. No secret is in a row."""
    now = clock.now()
    with reading(repo):
        return [_row(doc, now) for doc in _all(repo.datastore)]


def revoke(repo, name: str, *, ca_sha256: str) -> dict:
    """Refuse any further use of NAME's token and delete its sealed bundle.
    Only the holder of the CA that issued it (``ca_sha256``) revokes it."""
    now = clock.now()
    with changing(repo, f"worker token revoke {name}", leases=[lease_of(name)]):
        doc = _read(repo.datastore, name)
        if doc is None:
            raise NotFoundError(f"no worker token {name!r}", hint="'swamp worker token list' shows them")
        if not hmac.compare_digest(str(doc.get("caSha256", "")), ca_sha256):
            raise TokenRefusedError(f"worker token {name!r} was issued by another team CA than the one in this "
                                    "folder; only its CA holder revokes it",
                                    hint="run this where that CA's key is (--dir DIR)")
        if doc.get("revokedAt"):
            return _row(doc, now)
        doc.pop("sealed", None)
        doc.update(revokedAt=clock.isoformat(now), revokedBy=actors.local_user())
        _write(repo.datastore, name, doc)
    return _row(doc, now)


def lookup(repo, token: str) -> dict | None:
    """The row of the token ``token`` (None: no such token)."""
    with reading(repo):
        doc = _find(repo.datastore, token)
    return None if doc is None else _row(doc, clock.now())


def redeem(repo, token: str, install: Callable[[dict], dict]) -> dict:
    """Open the token's bundle and hand it to ``install`` (which writes the
    files on this machine), then mark the token used and delete the bundle,
    in one session under the token's lease: two machines racing with one
    token get one certificate between them."""
    token = (token or "").strip()
    if not token.startswith(PREFIX):
        raise UsageError("that is not a worker enrolment token",
                         hint=f"a token starts with {PREFIX!r}: the one 'swamp worker token create' printed")
    with reading(repo):
        found = _find(repo.datastore, token)
    if found is None:
        raise TokenRefusedError("no such worker enrolment token", hint="ask the CA holder for a new one "
                                "('swamp worker token create NAME'); check that this checkout's datastore is the "
                                "team's shared one")
    name = found["name"]
    installed = None
    try:
        with changing(repo, f"worker enrol {name}", leases=[lease_of(name)]):
            doc = _read(repo.datastore, name)
            now = clock.now()
            if doc is None or not hmac.compare_digest(str(doc.get("sha256", "")), digest(token)):
                raise TokenRefusedError(f"the worker token {name!r} was replaced", hint="ask for a new one")
            state = _state(doc, now)
            if state != "pending":
                raise TokenRefusedError(_refusal(doc, state), hint="ask the CA holder for a new token")
            pems = _open(token, name, str(doc["expiresAt"]), doc["sealed"])
            installed = install(pems)
            doc.pop("sealed", None)
            doc.update(enrolledAt=clock.isoformat(now), enrolledBy=actors.local_user())
            _write(repo.datastore, name, doc)
    except UnpublishedError:
        raise  # used here, published by the next sync: the certificate stays installed
    except BaseException:
        if installed is not None:  # the token was not marked used: the certificate must not stay either
            for key in ("key", "certificate"):
                if installed.get(key):
                    Path(installed[key]).unlink(missing_ok=True)
        raise
    return {**_row(doc, now), "installed": installed}


# ------------------------------------------------------------------ helpers
def _refusal(doc: dict, state: str) -> str:
    name = doc["name"]
    if state == "revoked":
        return f"worker token {name!r} was revoked by {doc.get('revokedBy')} at {doc.get('revokedAt')}"
    if state == "used":
        return f"worker token {name!r} was already used, by {doc.get('enrolledBy')} at {doc.get('enrolledAt')}"
    return f"worker token {name!r} expired at {doc.get('expiresAt')}"


def _state(doc: dict, now: float) -> str:
    if doc.get("revokedAt"):
        return "revoked"
    if doc.get("enrolledAt"):
        return "used"
    if clock.parse_iso(doc["expiresAt"]).timestamp() <= now:
        return "expired"
    return "pending"


def _row(doc: dict, now: float) -> dict:
    keys = ("name", "createdAt", "createdBy", "expiresAt", "enrolledAt", "enrolledBy", "revokedAt", "revokedBy",
            "certificateSha256")
    return {"state": _state(doc, now), **{k: doc.get(k) for k in keys}}


def _read(ds, name: str) -> dict | None:
    try:
        raw = ds.read_bytes(path_of(name))
    except NotFoundError:
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        raise ValidationError(f"{path_of(name)} in the datastore is not JSON",
                              hint=f"revoke it ('swamp worker token revoke {name}') and make a new one") from None
    if not isinstance(doc, dict) or doc.get("name") != name:
        raise ValidationError(f"{path_of(name)} in the datastore is not a worker token")
    return doc


def _all(ds) -> list[dict]:
    if not ds.exists(FOLDER):
        return []
    names = sorted(f[: -len(".json")] for f in ds.listdir(FOLDER) if f.endswith(".json"))
    return [doc for doc in (_read(ds, n) for n in names) if doc is not None]


def _find(ds, token: str) -> dict | None:
    wanted = digest(token)
    return next((d for d in _all(ds) if hmac.compare_digest(str(d.get("sha256", "")), wanted)), None)


def _write(ds, name: str, doc: dict) -> None:
    ds.write_bytes(path_of(name), (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())


def _key(token: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(token.encode())


def _aad(name: str, token: str, expires_at: str) -> bytes:
    # the document's fields a bundle is bound to: moving it to another name,
    # or pushing its expiry back in the datastore, makes it unopenable
    return f"{name}\n{digest(token)}\n{expires_at}".encode()


def _seal(token: str, name: str, expires_at: str, pems: dict) -> dict:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(12)
    body = json.dumps({k: pems[k] for k in ("name", "ca", "certificate", "key")}).encode()
    sealed = AESGCM(_key(token)).encrypt(nonce, body, _aad(name, token, expires_at))
    return {"nonce": base64.b64encode(nonce).decode(), "ciphertext": base64.b64encode(sealed).decode()}


def _open(token: str, name: str, expires_at: str, sealed: dict) -> dict:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        body = AESGCM(_key(token)).decrypt(base64.b64decode(sealed["nonce"]), base64.b64decode(sealed["ciphertext"]),
                                           _aad(name, token, expires_at))
        pems = json.loads(body)
    except (InvalidTag, KeyError, TypeError, ValueError):
        raise TokenRefusedError(f"the sealed certificate of worker token {name!r} does not open with this token",
                                hint="it was changed in the datastore: revoke it and make a new one") from None
    if pems.get("name") != name:
        raise TokenRefusedError(f"the sealed certificate of worker token {name!r} is for another name")
    return pems
