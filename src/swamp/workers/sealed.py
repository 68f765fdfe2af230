"""A placed step's secrets, sealed to the workers that may run it.

The link is mutual TLS, but a step's payload also sits in the scheduler's
task state while it is queued and runs, where the scheduler's process, and
any enrolled party that asks it (``run_on_scheduler``), can read it. So the
dispatcher never puts the secrets' values there in clear: it seals them to
each fitting worker's own key (the key of the certificate the worker
presented in a TLS handshake with the dispatcher, which the team CA signed),
restricts the step to those workers, and only the worker that runs the step
opens its copy.

Sealing: per worker, an ephemeral P-256 key agreement (ECDH) with the
worker's public key, HKDF-SHA256 to an AES-256-GCM key, the step's task key
as associated data (a sealed box cannot be moved to another step)."""

from __future__ import annotations

import json
import os
import socket
import ssl

from swamp.errors import SealError

_INFO = b"swamp placed-step secrets v1"


def peer_certificate(address: str, ssl_context: ssl.SSLContext, *, timeout: float = 10.0) -> bytes:
    """The DER certificate the worker at ``address`` (tls://HOST:PORT)
    presents; the handshake (our context: the team CA, our certificate)
    proves it holds its key and that the team CA signed it."""
    from swamp.workers.links import host_of, port_of

    host, port = host_of(address), port_of(address)
    with socket.create_connection((host, port), timeout=timeout) as raw:
        with ssl_context.wrap_socket(raw, server_hostname=None) as tls:
            der = tls.getpeercert(binary_form=True)
    if not der:
        raise SealError(f"the worker at {address} presented no certificate")
    return der


def fingerprint(der: bytes) -> str:
    import hashlib

    return hashlib.sha256(der).hexdigest()


def seal(secrets: dict, recipients: dict[str, bytes], *, context: str) -> dict:
    """``secrets`` ({(vault, key): value}) sealed to every recipient
    ({worker address: DER certificate}): {fingerprint: box}."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

    plain = json.dumps(sorted([v, k, value] for (v, k), value in secrets.items())).encode()
    boxes = {}
    for der in recipients.values():
        public = x509.load_der_x509_certificate(der).public_key()
        if not isinstance(public, ec.EllipticCurvePublicKey):
            raise SealError("a worker's certificate has no EC key: issue it with 'swamp worker cert issue'")
        ephemeral = ec.generate_private_key(public.curve)
        nonce = os.urandom(12)
        box = _aead(ephemeral.exchange(ec.ECDH(), public), context).encrypt(nonce, plain, context.encode())
        boxes[fingerprint(der)] = {"ephemeral": _public_bytes(ephemeral.public_key()), "nonce": nonce, "box": box}
    return boxes


def open_sealed(boxes: dict, *, cert_der: bytes, key, context: str) -> dict:
    """The secrets sealed to this worker (its certificate and key)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.asymmetric import ec

    mine = boxes.get(fingerprint(cert_der))
    if mine is None:
        raise SealError("this step's secrets were sealed for other workers, not this one",
                        hint="the step is restricted to the workers it was sealed for; is this worker's "
                             "certificate the one it presented?")
    public = ec.EllipticCurvePublicKey.from_encoded_point(key.curve, mine["ephemeral"])
    try:
        plain = _aead(key.exchange(ec.ECDH(), public), context).decrypt(mine["nonce"], mine["box"],
                                                                         context.encode())
    except InvalidTag:
        raise SealError("this step's sealed secrets do not open with this worker's key") from None
    return {(v, k): value for v, k, value in json.loads(plain)}


def _aead(shared: bytes, context: str):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return AESGCM(HKDF(hashes.SHA256(), 32, salt=None, info=_INFO + b"|" + context.encode()).derive(shared))


def _public_bytes(public) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
