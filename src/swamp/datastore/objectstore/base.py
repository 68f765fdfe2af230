"""The ObjectStore interface every backend implements (SYNC.md "Backends").

Keys are '/'-separated strings relative to the store's root (a bucket plus
an optional prefix). ETags are opaque strings: compare them only for
equality and hand them back in ``if_match``.
"""

from __future__ import annotations

import abc
import os
from pathlib import Path
from typing import Iterator, NamedTuple

# the interface's errors, importable from here too (defined in swamp/errors.py)
from swamp.errors import (BackendRefused, ObjectNotFound, ObjectStoreError, PreconditionFailed,  # noqa: F401
                          SourceChanged, TransientError)

from .streams import Download


def check_key(key: str) -> str:
    """Return ``key`` if it is safe on every backend, else raise ValueError.

    Keys are relative '/'-separated paths: no leading '/', no empty, '.' or
    '..' segment, no NUL or backslash. That keeps a key from escaping a
    directory root and makes it mean the same object on S3, GCS and disk.
    """
    if not isinstance(key, str) or not key:
        raise ValueError(f"invalid object key {key!r}: empty")
    if "\0" in key or "\\" in key:
        raise ValueError(f"invalid object key {key!r}: NUL or backslash")
    if any(seg in ("", ".", "..") for seg in key.split("/")):
        raise ValueError(f"invalid object key {key!r}: absolute, empty, '.' or '..' segment")
    return key


class ObjectMeta(NamedTuple):
    """What a listing or a head says of one object (immutable)."""

    key: str
    size: int
    etag: str
    last_modified: float  # seconds since the epoch, by the server's clock


class ObjectStore(abc.ABC):
    #: human name for messages, e.g. "s3://bucket/prefix"
    name: str = "objectstore"

    @abc.abstractmethod
    def get(self, key: str) -> tuple[bytes, str]:
        """Return (body, etag). Raises ObjectNotFound."""

    @abc.abstractmethod
    def put(
        self,
        key: str,
        data: bytes,
        *,
        if_none_match: bool = False,
        if_match: str | None = None,
    ) -> str:
        """Write ``data`` and return the new ETag.

        ``if_none_match=True``: create-only; PreconditionFailed if present.
        ``if_match=etag``: compare-and-swap; PreconditionFailed if the current
        ETag differs or the key is missing.
        """

    @abc.abstractmethod
    def head(self, key: str) -> ObjectMeta | None:
        """Metadata of ``key``, or None when it does not exist."""

    @abc.abstractmethod
    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        """Objects whose key starts with ``prefix``, in ascending key order,
        strictly after ``start_after`` when given."""

    @abc.abstractmethod
    def delete(self, key: str, *, if_match: str | None = None) -> None:
        """Delete ``key``; deleting a missing key is not an error (unless
        ``if_match`` is given, which raises PreconditionFailed)."""

    # ------------------------------------------------------------ streaming
    # Every backend overrides both with a transfer in pieces. These fallbacks
    # hold the whole object in memory: they exist so that a wrapper which
    # does not forward them still works, only without the memory bound.
    def put_file(self, key: str, path: Path, *, if_none_match: bool = False, sha256: str | None = None) -> str:
        """Upload the file at ``path`` without holding it in memory, and
        return the new ETag.

        ``sha256``: the hash the caller computed of the file. The bytes are
        hashed again as they are read, and if they differ (the file changed
        in between) SourceChanged is raised before the upload's last request,
        so no object holds them: a content-addressed key never gets bytes
        that are not its hash.

        ``if_none_match=True``: PreconditionFailed if ``key`` exists. Above a
        backend's multipart threshold S3 cannot make the final step
        create-only (see s3.py): the check is made when the upload starts, so
        two uploads racing to create one key may both succeed. Use it only for
        content-addressed keys (blobs), where both wrote the same bytes.
        """
        data = Path(path).read_bytes()
        import hashlib  # here, not at import: loading OpenSSL costs a read-only command 2 ms

        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise self._source_changed(key, path)
        return self.put(key, data, if_none_match=if_none_match)

    def _source_changed(self, key: str, path: Path) -> "SourceChanged":
        return SourceChanged(f"{path} changed after it was hashed; nothing was uploaded to {self.name}{key}")

    def get_file(self, key: str, dest: Path, *, size_hint: int | None = None, fsync: bool = False) -> Download:
        """Write the object into the file ``dest`` (created or emptied) in
        pieces, hashing as it goes; return its sha256, size and ETag. Raises
        ObjectNotFound. ``size_hint`` (the size the caller expects, e.g. from
        a commit record) sizes the request timeout without asking first;
        ``fsync`` makes ``dest`` durable before returning. The caller checks
        the hash and moves ``dest`` into place."""
        data, etag = self.get(key)
        with open(dest, "wb") as f:
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        import hashlib

        return Download(hashlib.sha256(data).hexdigest(), len(data), etag)

    def close(self) -> None:  # pragma: no cover - optional
        pass
