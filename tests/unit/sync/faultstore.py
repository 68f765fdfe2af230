"""Test doubles: a store that fails on purpose, and a minimal retry wrapper
(the product's RetryingObjectStore lives in objectstore/retry.py)."""

from __future__ import annotations

import random
import threading
from typing import Iterator

from swamp.datastore.objectstore.base import ObjectMeta, ObjectStore
from swamp.errors import TransientError


class FaultyStore(ObjectStore):
    """``before``: fail without doing anything. ``after``: do the write, then
    fail as if the response was lost. Both are probabilities per call."""

    def __init__(self, inner: ObjectStore, *, before: float = 0.0, after: float = 0.0, seed: int = 0,
                 only: str = "") -> None:
        self.inner = inner
        self.name = inner.name
        self.before = before
        self.after = after
        self.only = only  # only keys containing this fail
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.injected = 0

    def _roll(self, p: float, key: str) -> bool:
        if self.only not in key:
            return False
        with self._lock:
            hit = self._rng.random() < p
            self.injected += hit
            return hit

    def _call(self, key: str, fn, *, writes: bool):
        if self._roll(self.before, key):
            raise TransientError(f"injected fault before {key}")
        out = fn()
        if writes and self._roll(self.after, key):
            raise TransientError(f"injected fault after {key} (the write happened)")
        return out

    def get(self, key):
        return self._call(key, lambda: self.inner.get(key), writes=False)

    def put(self, key, data, *, if_none_match=False, if_match=None):
        return self._call(key, lambda: self.inner.put(key, data, if_none_match=if_none_match, if_match=if_match),
                          writes=True)

    def head(self, key):
        return self._call(key, lambda: self.inner.head(key), writes=False)

    def list(self, prefix="", start_after=None) -> Iterator[ObjectMeta]:
        return self._call(prefix, lambda: list(self.inner.list(prefix, start_after)), writes=False)

    def delete(self, key, *, if_match=None):
        return self._call(key, lambda: self.inner.delete(key, if_match=if_match), writes=True)


class Retrying(ObjectStore):
    """Retries TransientError a few times, like the real wrapper: a retried
    create-only PUT whose first try landed answers 412."""

    def __init__(self, inner: ObjectStore, attempts: int = 4) -> None:
        self.inner = inner
        self.name = inner.name
        self.attempts = attempts

    def _retry(self, fn):
        for i in range(self.attempts):
            try:
                return fn()
            except TransientError:
                if i == self.attempts - 1:
                    raise

    def get(self, key):
        return self._retry(lambda: self.inner.get(key))

    def put(self, key, data, *, if_none_match=False, if_match=None):
        return self._retry(lambda: self.inner.put(key, data, if_none_match=if_none_match, if_match=if_match))

    def head(self, key):
        return self._retry(lambda: self.inner.head(key))

    def list(self, prefix="", start_after=None):
        return self._retry(lambda: list(self.inner.list(prefix, start_after)))

    def delete(self, key, *, if_match=None):
        return self._retry(lambda: self.inner.delete(key, if_match=if_match))
