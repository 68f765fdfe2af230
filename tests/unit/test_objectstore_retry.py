"""RetryingObjectStore: what is retried, what never is, and what a 412 after
a lost answer means."""

from __future__ import annotations

from typing import Iterator

import pytest

from swamp.datastore.objectstore.base import ObjectMeta, ObjectStore
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.errors import ObjectNotFound, PreconditionFailed, TransientError


class Flaky(ObjectStore):
    """Fails the next ``failures`` calls with TransientError. With
    ``apply_then_fail`` the write is applied first, as when a server commits
    a PUT whose answer then times out."""

    def __init__(self, inner: ObjectStore, failures: int = 0, apply_then_fail: bool = False) -> None:
        self.inner = inner
        self.name = "flaky://"
        self.failures = failures
        self.apply_then_fail = apply_then_fail

    def _fault(self) -> bool:
        if self.failures > 0:
            self.failures -= 1
            return True
        return False

    def get(self, key: str) -> tuple[bytes, str]:
        if self._fault():
            raise TransientError("503")
        return self.inner.get(key)

    def put(self, key: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None) -> str:
        if self.failures > 0 and self.apply_then_fail:
            self.inner.put(key, data, if_none_match=if_none_match, if_match=if_match)
        if self._fault():
            raise TransientError("timed out")
        return self.inner.put(key, data, if_none_match=if_none_match, if_match=if_match)

    def head(self, key: str) -> ObjectMeta | None:
        if self._fault():
            raise TransientError("503")
        return self.inner.head(key)

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        for n, meta in enumerate(self.inner.list(prefix, start_after)):
            if n == 1 and self._fault():
                raise TransientError("connection reset mid-listing")
            yield meta

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        if self.failures > 0 and self.apply_then_fail:
            self.inner.delete(key, if_match=if_match)
        if self._fault():
            raise TransientError("timed out")
        self.inner.delete(key, if_match=if_match)


def retrying(inner: ObjectStore, attempts: int = 4) -> tuple[RetryingObjectStore, list[float]]:
    sleeps: list[float] = []
    return RetryingObjectStore(inner, attempts=attempts, base_delay=0.1, max_delay=0.3,
                               sleep=sleeps.append), sleeps


def test_transient_errors_are_retried_with_growing_jittered_delays() -> None:
    mem = MemoryObjectStore()
    store, sleeps = retrying(Flaky(mem, failures=3))
    store.put("k", b"v")
    assert mem.get("k")[0] == b"v"
    assert store.requests == 4
    assert len(sleeps) == 3
    for attempt, delay in enumerate(sleeps):
        step = min(0.3, 0.1 * 2 ** attempt)
        assert step / 2 <= delay <= step


def test_retries_are_bounded() -> None:
    store, sleeps = retrying(Flaky(MemoryObjectStore(), failures=10), attempts=3)
    with pytest.raises(TransientError):
        store.get("k")
    assert store.requests == 3
    assert len(sleeps) == 2


def test_precondition_failed_and_not_found_are_never_retried() -> None:
    mem = MemoryObjectStore()
    store, sleeps = retrying(mem)
    store.put("k", b"v", if_none_match=True)
    with pytest.raises(PreconditionFailed):
        store.put("k", b"w", if_none_match=True)
    with pytest.raises(PreconditionFailed):
        store.put("k", b"w", if_match="stale")
    with pytest.raises(ObjectNotFound):
        store.get("missing")
    assert sleeps == []
    assert store.requests == 4
    assert [op for op, _ in mem.requests] == ["PUT", "PUT", "PUT", "GET"]


def test_create_that_succeeded_before_its_answer_was_lost_is_a_success() -> None:
    mem = MemoryObjectStore()
    store, _ = retrying(Flaky(mem, failures=1, apply_then_fail=True))
    etag = store.put("log/1", b"our commit", if_none_match=True)
    assert mem.get("log/1") == (b"our commit", etag)


def test_create_that_lost_the_race_during_a_retry_still_fails() -> None:
    mem = MemoryObjectStore()
    flaky = Flaky(mem, failures=1)
    store, _ = retrying(flaky)
    # the first attempt times out; a peer creates the key before our retry
    original_put = flaky.put

    def put_with_peer(key: str, data: bytes, **kw: object) -> str:
        if flaky.failures == 0 and mem.head(key) is None:
            mem.put(key, b"peer's commit")
        return original_put(key, data, **kw)  # type: ignore[arg-type]

    flaky.put = put_with_peer  # type: ignore[method-assign]
    with pytest.raises(PreconditionFailed):
        store.put("log/1", b"our commit", if_none_match=True)
    assert mem.get("log/1")[0] == b"peer's commit"


def test_cas_after_a_lost_answer_reports_the_uncertainty() -> None:
    mem = MemoryObjectStore()
    etag = mem.put("lease", b"v1")
    store, _ = retrying(Flaky(mem, failures=1, apply_then_fail=True))
    with pytest.raises(PreconditionFailed, match="may have been applied"):
        store.put("lease", b"v2", if_match=etag)


def test_conditional_delete_that_succeeded_before_its_answer_was_lost() -> None:
    mem = MemoryObjectStore()
    etag = mem.put("lease", b"v1")
    store, _ = retrying(Flaky(mem, failures=1, apply_then_fail=True))
    store.delete("lease", if_match=etag)
    assert mem.head("lease") is None


def test_listing_resumes_after_the_last_key_it_yielded() -> None:
    mem = MemoryObjectStore()
    for i in range(5):
        mem.put(f"log/{i}", b"x")
    store, _ = retrying(Flaky(mem, failures=1))
    assert [m.key for m in store.list("log/")] == [f"log/{i}" for i in range(5)]
    assert store.requests == 2


def test_on_request_callback_sees_every_call() -> None:
    seen: list[tuple[str, str]] = []
    store = RetryingObjectStore(Flaky(MemoryObjectStore(), failures=1), sleep=lambda s: None,
                                on_request=lambda op, key: seen.append((op, key)))
    store.put("k", b"v")
    assert seen == [("PUT", "k"), ("PUT", "k")]
