"""Whether a bucket exists, and creating one on request.

`datastore setup` checks the bucket before anything else: some S3-compatible
servers (SeaweedFS among them) create a bucket on the first write to it, so
a mistyped name would otherwise be silently created and filled."""

from __future__ import annotations

from swamp.errors import ObjectStoreError

from .base import ObjectStore


def _backend(store: ObjectStore) -> ObjectStore:
    return getattr(store, "inner", store)  # through the retry layer


def ensure_bucket(store: ObjectStore, *, create: bool) -> bool:
    """Raise ObjectStoreError (code ``no_such_bucket``) when the store's
    bucket does not exist, unless ``create``: then create it. Returns
    whether it was created. Stores without buckets (a directory) pass."""
    backend = _backend(store)
    exists = getattr(backend, "bucket_exists", None)
    if exists is None or exists():
        return False
    if not create:
        raise ObjectStoreError(f"the bucket '{backend.bucket_name}' does not exist"
                               + (f" on {backend.endpoint}" if getattr(backend, "endpoint", None) else ""),
                               code="no_such_bucket",
                               hint="check --bucket, or add --create-bucket to create it")
    backend.create_bucket()
    return True
