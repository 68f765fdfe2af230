"""The one retry layer over any ObjectStore (SYNC.md "Backends").

TransientError (409, 429, 5xx, timeouts, dropped connections) is retried with
jittered exponential backoff, a bounded number of times. PreconditionFailed
and ObjectNotFound are answers, never retried.

A retry after a timeout is subtle for conditional writes, because the first
attempt may have been applied by the server even though we never saw the
answer:

* create-only put: the retry answers 412 against our own object. We read the
  key back; if it holds exactly our bytes, the create is reported as done.
  Bytes identical to ours written by someone else are indistinguishable from
  ours, so callers whose creates must be told apart put something unique in
  them (commit records name their writer and time; blobs are content
  addressed, where "already there" is success anyway).
* compare-and-swap put: the retry answers 412 because our own write changed
  the ETag, or because someone else's did. Equal bytes would prove nothing
  (two peers can CAS the same next value), so the PreconditionFailed stands,
  with a message saying the outcome is uncertain.
* conditional delete: a retry that finds the key gone reports success (ours
  or a concurrent delete: the key is gone either way).

A request that got no answer at all (code ``no_answer``: nothing within the connect
or answer timeout) is tried at most ``no_answer_attempts`` times, since each
try costs the whole timeout; every retry after a wait that long says so on
stderr (``notice``), so a person never watches a silent terminal.

Streaming transfers retry from the start: put_file reads its file again,
get_file empties its destination again. A create-only put_file whose retry
answers 412 compares hashes instead of bytes (the remote object is streamed
through a hash, never held).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from .base import ObjectMeta, ObjectStore, PreconditionFailed, TransientError
from .no_answer import NO_ANSWER
from .streams import Download, file_sha256
from swamp.util import jitter

T = TypeVar("T")

#: an attempt that failed after this long is worth a line on stderr before its retry
SLOW_ATTEMPT_S = 1.0


def notice_on_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class RetryingObjectStore(ObjectStore):
    def __init__(
        self,
        inner: ObjectStore,
        attempts: int = 5,
        base_delay: float = 0.1,
        max_delay: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        on_request: Callable[[str, str], None] | None = None,
        no_answer_attempts: int = 3,
        notice: Callable[[str], None] | None = notice_on_stderr,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.inner = inner
        self.name = inner.name
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.sleep = sleep
        self.on_request = on_request
        self.no_answer_attempts = max(1, no_answer_attempts)
        self.notice = notice
        #: calls made to the inner store, retries and read-backs included: the
        #: sync engine's ``requests`` (a listing counts once, however many pages)
        self.requests = 0
        self._count_lock = threading.Lock()

    def _count(self, op: str, key: str) -> None:
        with self._count_lock:
            self.requests += 1
        if self.on_request is not None:
            self.on_request(op, key)

    def _delay(self, attempt: int) -> float:
        # "equal jitter": at least half the exponential step, never zero, so
        # racing peers spread out.
        step = min(self.max_delay, self.base_delay * (2 ** attempt))
        return step / 2 + jitter.uniform(0, step / 2)

    def _give_up(self, e: TransientError, attempt: int, no_answers: int, started: float) -> bool:
        """Whether ``e``, the failure of try ``attempt`` (from 0), is the last
        one; if not, and the try took long, say that a retry follows."""
        most = min(self.attempts, attempt + 1 + self.no_answer_attempts - no_answers) if no_answers else self.attempts
        if attempt + 1 >= most:
            return True
        if self.notice is not None and time.monotonic() - started >= SLOW_ATTEMPT_S:
            self.notice(f"{e.message}; trying again ({attempt + 2} of at most {most})")
        return False

    def _call(self, op: str, key: str, fn: Callable[[], T],
              on_retry_412: Callable[[PreconditionFailed], T] | None = None) -> T:
        """Run fn with retries. ``on_retry_412`` decides what a 412 means when
        it comes after an attempt whose outcome we could not see."""
        no_answers = 0
        for attempt in range(self.attempts):
            self._count(op, key)
            started = time.monotonic()
            try:
                return fn()
            except TransientError as e:
                no_answers += e.code == NO_ANSWER
                if self._give_up(e, attempt, no_answers, started):
                    raise
            except PreconditionFailed as e:
                if attempt == 0 or on_retry_412 is None:
                    raise
                return on_retry_412(e)
            self.sleep(self._delay(attempt))
        raise AssertionError("unreachable")

    # ------------------------------------------------------------ the API
    def get(self, key: str) -> tuple[bytes, str]:
        return self._call("GET", key, lambda: self.inner.get(key))

    def head(self, key: str) -> ObjectMeta | None:
        return self._call("HEAD", key, lambda: self.inner.head(key))

    def put(self, key: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        if not (isinstance(data, bytes) or (isinstance(data, memoryview) and data.readonly)):
            data = bytes(data)  # a snapshot every attempt sends alike (a read-only view is one already)

        def after_lost_answer(e: PreconditionFailed) -> str:
            if if_none_match:
                try:
                    current, etag = self.get(key)
                except Exception:
                    raise e from None
                if current == data:
                    return etag  # our own earlier attempt created it
                raise e
            raise PreconditionFailed(
                f"{e.message} (an earlier attempt timed out and may have been applied)") from e

        return self._call("PUT", key,
                          lambda: self.inner.put(key, data, if_none_match=if_none_match, if_match=if_match),
                          after_lost_answer)

    def put_file(self, key: str, path: Path, *, if_none_match: bool = False, sha256: str | None = None) -> str:
        def after_lost_answer(e: PreconditionFailed) -> str:
            if if_none_match:
                try:
                    there = self.get_file(key, Path(os.devnull))  # hashed on the way, kept nowhere
                except Exception:
                    raise e from None
                if there.sha256 == (sha256 or file_sha256(Path(path))):
                    return there.etag  # our own earlier attempt created it
            raise e

        return self._call("PUT", key,
                          lambda: self.inner.put_file(key, path, if_none_match=if_none_match, sha256=sha256),
                          after_lost_answer)

    def get_file(self, key: str, dest: Path, *, size_hint: int | None = None, fsync: bool = False) -> Download:
        return self._call("GET", key, lambda: self.inner.get_file(key, dest, size_hint=size_hint, fsync=fsync))

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        def after_lost_answer(e: PreconditionFailed) -> None:
            if self.head(key) is not None:
                raise e

        self._call("DELETE", key, lambda: self.inner.delete(key, if_match=if_match), after_lost_answer)

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        # A listing that fails midway resumes after the last key it yielded.
        last = start_after
        no_answers = 0
        for attempt in range(self.attempts):
            self._count("LIST", prefix)
            started = time.monotonic()
            try:
                for meta in self.inner.list(prefix, last):
                    yield meta
                    last = meta.key
                    started = time.monotonic()  # the wait that counts is the one for the next page
                return
            except TransientError as e:
                no_answers += e.code == NO_ANSWER
                if self._give_up(e, attempt, no_answers, started):
                    raise
            self.sleep(self._delay(attempt))

    def close(self) -> None:
        self.inner.close()
