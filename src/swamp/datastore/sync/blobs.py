"""Content-addressed blobs: ``blobs/<2 hex>/<sha256>``, written create-only
(412 means the same bytes are already there) and verified on every read."""

from __future__ import annotations

from pathlib import Path

from swamp.errors import CorruptRemoteError, ObjectNotFound, PreconditionFailed
from swamp.util.digest import sha256_hex as sha256_bytes  # the one SHA-256 of bytes in memory

from .counting import Session
from .layout import Layout


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


# Streaming: contents too large to hold in memory move between a file and
# the store in pieces (the store's put_file / get_file).

def upload_blob_file(s: Session, layout: Layout, sha256: str, path: Path, size: int) -> bool:
    """``upload_blob`` from the file at ``path``, hashed by the caller as
    ``sha256``. SourceChanged (from the store) when the file no longer
    holds those bytes: nothing was stored."""
    try:
        s.put_file(layout.blob(sha256), path, if_none_match=True, sha256=sha256)
    except PreconditionFailed:
        s.add(bytesPushed=size)
        return False
    s.add(bytesPushed=size)
    return True


def fetch_blob_file(s: Session, layout: Layout, sha256: str, dest: Path, size: int, fsync: bool = True) -> None:
    """``fetch_blob`` into the file ``dest`` (made durable unless ``fsync``
    is False: then the caller makes it durable); the caller puts it in place
    only once this returns: its hash has been checked."""
    try:
        got = s.get_file(layout.blob(sha256), dest, size_hint=size, fsync=fsync)
    except ObjectNotFound:
        raise CorruptRemoteError(f"blob {sha256} is referenced by the log but missing from {s.name}",
                                 hint="run 'swamp datastore verify'") from None
    s.add(bytesPulled=got.size)
    if got.sha256 != sha256:
        raise CorruptRemoteError(f"blob {sha256} does not match its hash (corrupt or truncated transfer)",
                                 hint="retry; if it persists run 'swamp datastore verify'")
