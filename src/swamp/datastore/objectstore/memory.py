"""An in-memory ObjectStore with exact conditional semantics, for unit tests
of the sync engine. Thread-safe; not shared between processes."""

from __future__ import annotations

import hashlib
import itertools
import threading
from typing import Iterator

from swamp.errors import ObjectNotFound, PreconditionFailed
from swamp.util import clock

from .base import ObjectMeta, ObjectStore


class MemoryObjectStore(ObjectStore):
    def __init__(self, name: str = "memory://") -> None:
        self.name = name
        self._objects: dict[str, tuple[bytes, str, float]] = {}
        self._lock = threading.Lock()
        self._counter = itertools.count(1)
        #: every call, for tests that count requests
        self.requests: list[tuple[str, str]] = []

    def _etag(self, data: bytes) -> str:
        return f'"{hashlib.md5(data).hexdigest()}-{next(self._counter)}"'

    def get(self, key: str) -> tuple[bytes, str]:
        with self._lock:
            self.requests.append(("GET", key))
            try:
                data, etag, _ = self._objects[key]
            except KeyError:
                raise ObjectNotFound(f"{self.name}{key} not found") from None
            return data, etag

    def put(self, key, data, *, if_none_match=False, if_match=None) -> str:
        data = bytes(data)
        with self._lock:
            self.requests.append(("PUT", key))
            cur = self._objects.get(key)
            if if_none_match and cur is not None:
                raise PreconditionFailed(f"{key} already exists")
            if if_match is not None and (cur is None or cur[1] != if_match):
                raise PreconditionFailed(f"{key} changed (etag mismatch)")
            etag = self._etag(data)
            # the server's clock is the injected one, so tests can age objects
            self._objects[key] = (data, etag, clock.now())
            return etag

    def head(self, key: str) -> ObjectMeta | None:
        with self._lock:
            self.requests.append(("HEAD", key))
            cur = self._objects.get(key)
            if cur is None:
                return None
            return ObjectMeta(key, len(cur[0]), cur[1], cur[2])

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        with self._lock:
            self.requests.append(("LIST", prefix))
            items = sorted(
                (k, v) for k, v in self._objects.items()
                if k.startswith(prefix) and (start_after is None or k > start_after)
            )
        for k, (data, etag, mtime) in items:
            yield ObjectMeta(k, len(data), etag, mtime)

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        with self._lock:
            self.requests.append(("DELETE", key))
            cur = self._objects.get(key)
            if if_match is not None and (cur is None or cur[1] != if_match):
                raise PreconditionFailed(f"{key} changed (etag mismatch)")
            self._objects.pop(key, None)
