"""A view of an ObjectStore that counts every call into one sync's report,
so ``requests`` in SyncCounts is the truth rather than an estimate."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator

from swamp.datastore.sync.counts import SyncCounts
from swamp.datastore.objectstore.base import ObjectMeta, ObjectStore
from swamp.datastore.objectstore.streams import Download


class Session(ObjectStore):
    """One sync operation: the store as this operation sees it, and its counts.
    Thread-safe: the transfer pool shares it."""

    def __init__(self, inner: ObjectStore, counts: SyncCounts | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.counts = counts if counts is not None else SyncCounts()
        self._lock = threading.Lock()

    def add(self, **fields: int) -> None:
        with self._lock:
            for k, v in fields.items():
                setattr(self.counts, k, getattr(self.counts, k) + v)

    def conflict(self, entry: dict) -> None:
        with self._lock:
            self.counts.conflicts.append(entry)

    def renumber(self, entry: dict) -> None:
        with self._lock:
            self.counts.renumbered.append(entry)

    def get(self, key: str) -> tuple[bytes, str]:
        self.add(requests=1)
        return self.inner.get(key)

    def put(self, key: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None) -> str:
        self.add(requests=1)
        return self.inner.put(key, data, if_none_match=if_none_match, if_match=if_match)

    def head(self, key: str) -> ObjectMeta | None:
        self.add(requests=1)
        return self.inner.head(key)

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        self.add(requests=1)
        return self.inner.list(prefix, start_after)

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        self.add(requests=1)
        self.inner.delete(key, if_match=if_match)

    # Forwarded, or the base class would fall back to whole bytes in memory.
    # One request each, however many parts the backend moves it in.
    def put_file(self, key: str, path: Path, *, if_none_match: bool = False, sha256: str | None = None) -> str:
        self.add(requests=1)
        return self.inner.put_file(key, path, if_none_match=if_none_match, sha256=sha256)

    def get_file(self, key: str, dest: Path, *, size_hint: int | None = None, fsync: bool = False) -> Download:
        self.add(requests=1)
        return self.inner.get_file(key, dest, size_hint=size_hint, fsync=fsync)
