"""The ObjectStore interface every backend implements (SYNC.md "Backends").

Keys are '/'-separated strings relative to the store's root (a bucket plus
an optional prefix). ETags are opaque strings: compare them only for
equality and hand them back in ``if_match``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Iterator

from swamp.errors import SwampError


class ObjectStoreError(SwampError):
    code = "objectstore"


class ObjectNotFound(ObjectStoreError):
    code = "object_not_found"


class PreconditionFailed(ObjectStoreError):
    """A conditional write lost: the key exists (create-only) or its ETag
    changed (compare-and-swap). Never retried blindly."""

    code = "precondition_failed"


class TransientError(ObjectStoreError):
    """A fault worth retrying: 409 ConditionalRequestConflict, 5xx, timeout,
    dropped connection."""

    code = "transient"


class BackendRefused(ObjectStoreError):
    """The conditional-write probe (S7) failed: not safe for shared state."""

    code = "backend_refused"


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


@dataclass(frozen=True)
class ObjectMeta:
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

    def close(self) -> None:  # pragma: no cover - optional
        pass
