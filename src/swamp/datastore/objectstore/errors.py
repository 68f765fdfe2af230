"""The object store's errors, apart from its interface (``base.py``, which
re-exports them): a use case that only catches one (``app/lifecycle.py``)
does not load the interface and its streams."""

from __future__ import annotations

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


class SourceChanged(ObjectStoreError):
    """put_file was given the sha256 of the file, and the bytes it read are
    different: the file changed after it was hashed. Nothing was stored."""

    code = "source_changed"


class BackendRefused(ObjectStoreError):
    """The conditional-write probe (S7) failed: not safe for shared state."""

    code = "backend_refused"
