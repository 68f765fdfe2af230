"""The conditional-write probe (SYNC.md invariant S7: fail closed).

Some S3-compatible servers accept If-None-Match / If-Match and silently
overwrite anyway. Shared state on such a store loses updates without a
trace, so before a store is used for sharing, this probe checks on a scratch
key that the conditions are really enforced, and refuses the store if not.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Callable

from swamp.errors import BackendRefused, ObjectStoreError, PreconditionFailed

from .base import ObjectStore


def probe_conditional_writes(store: ObjectStore) -> None:
    """Raise BackendRefused naming the store and the failed check, or return
    when create-only and compare-and-swap writes are enforced."""
    key = f"_probe/{uuid.uuid4().hex}"

    def refuse(check: str) -> BackendRefused:
        return BackendRefused(
            f"{store.name} ignores conditional writes: {check}",
            hint="this store cannot hold a shared datastore safely; use AWS S3, GCS, "
                 "SeaweedFS (>4.16) or another server that enforces If-None-Match and If-Match")

    def must_fail(check: str, write: Callable[[], object]) -> None:
        try:
            write()
        except PreconditionFailed:
            return
        raise refuse(check)

    try:
        first = store.put(key, b"probe 1", if_none_match=True)
        must_fail("a second create-only write (If-None-Match: *) of the same key succeeded",
                  lambda: store.put(key, b"probe 2", if_none_match=True))
        must_fail("a compare-and-swap write (If-Match) on a missing key succeeded",
                  lambda: store.put(key + "-missing", b"probe", if_match=first))
        try:
            second = store.put(key, b"probe 3", if_match=first)
        except PreconditionFailed:
            raise refuse("a compare-and-swap write with the current ETag was refused") from None
        if second == first:
            raise refuse("a write did not change the ETag")
        must_fail("a compare-and-swap write with a stale ETag succeeded",
                  lambda: store.put(key, b"probe 4", if_match=first))
        if store.get(key)[0] != b"probe 3":
            raise refuse("a refused write changed the object anyway")
    finally:
        for k in (key, key + "-missing"):
            with contextlib.suppress(ObjectStoreError):
                store.delete(k)
