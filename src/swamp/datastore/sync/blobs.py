"""Content-addressed blobs: ``blobs/<2 hex>/<sha256>``, written create-only
(412 means the same bytes are already there) and verified on every read."""

from __future__ import annotations

import hashlib

from swamp.datastore.objectstore.base import ObjectNotFound, PreconditionFailed

from .counting import Session
from .errors import CorruptRemoteError
from .layout import Layout


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def upload_blob(s: Session, layout: Layout, sha256: str, data: bytes) -> bool:
    """Create the blob; False when identical content was already stored (412:
    success, but a push relying on it must protect it from gc, see gc.py)."""
    s.add(bytesPushed=len(data))
    try:
        s.put(layout.blob(sha256), data, if_none_match=True)
    except PreconditionFailed:
        return False
    return True


def fetch_blob(s: Session, layout: Layout, sha256: str) -> bytes:
    try:
        data, _ = s.get(layout.blob(sha256))
    except ObjectNotFound:
        raise CorruptRemoteError(f"blob {sha256} is referenced by the log but missing from {s.name}",
                                 hint="run 'swamp datastore verify'") from None
    s.add(bytesPulled=len(data))
    if sha256_bytes(data) != sha256:
        raise CorruptRemoteError(f"blob {sha256} does not match its hash (corrupt or truncated transfer)",
                                 hint="retry; if it persists run 'swamp datastore verify'")
    return data
