"""Transfers of a push: the blobs of changed files, uploaded concurrently
and create-only, each content once, with small files read (and hashed)
ahead of their uploads within a byte budget; blobs found already stored are
protected from a concurrent gc before the commit relies on them.

A mixin of ``SyncEngine``."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from swamp.errors import SwampError

from .blobs import upload_blob
from .commitlog import INLINE_TOTAL, Change
from .counting import Session
from .gc import protect
from .progress import Progress

#: a push reads and hashes files up to this size itself, ahead of the pool's
#: uploads; larger ones each in a pool thread
SMALL_FILE = 256 << 10
#: bytes of small files read ahead of their uploads, at most
READ_AHEAD_BYTES = 64 << 20


class Transfers:
    def _upload(self, s: Session, changes: list[Change], uploaded: set[str]) -> list[Change]:
        """Upload the blobs of ``changes`` (concurrently, create-only, each
        content once). Returns the changes as uploaded, with their sha256: a
        file rewritten since the diff is committed with the bytes sent.

        Blobs found already stored (412) are then protected from a concurrent
        gc, right before the commit that relies on them (gc.protect); one a gc
        swept since the 412 is uploaded again."""
        found: set[str] = set()
        inline = self.inline_max if self._inline_allowed(s) else 0
        out = self._send(s, changes, uploaded, found, inline)
        for _ in range(3):
            missing = protect(s, self.layout, found, self._pool)
            if not missing:
                return out
            uploaded -= missing
            found = set()
            again = {ch.path: ch for ch in self._send(
                s, [c for c in out if c.op == "put" and c.sha256 in missing], uploaded, found)}
            out = [again.get(c.path) if c.op == "put" and c.sha256 in missing else c for c in out]
            out = [c for c in out if c is not None]
        raise SwampError("blobs this push relies on keep being swept by a concurrent gc",
                         hint="let the gc finish, then push again", code="push_contended")

    def _send(self, s: Session, changes: list[Change], uploaded: set[str], found: set[str],
              inline_max: int = 0) -> list[Change]:
        """The uploads of ``_upload``; ``found`` gets the blobs that were
        already stored. A file of at most ``inline_max`` bytes goes inline
        in the commit record instead, while the commit's inline contents
        stay within INLINE_TOTAL (commitlog.py); whether its content is
        committed elsewhere does not matter (that may be inline too).

        Small files are read and hashed here, ahead of the uploads (up to
        READ_AHEAD_BYTES), so the pool threads only send; a large file is
        read, hashed and sent by one pool thread (hashing releases the GIL)."""
        claim = threading.Lock()
        room = INLINE_TOTAL  # inline bytes this commit may still carry
        carried: set[str] = set()
        puts = [ch for ch in changes if ch.op == "put"]
        progress = Progress(self.on_progress, "upload", len(puts), sum(ch.size for ch in puts))
        ahead = _Budget(READ_AHEAD_BYTES)

        def read_only(ch: Change) -> tuple[bytes, str] | None:
            try:
                return self.tree.read(ch.path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None  # gone since the diff; its delete is journaled for the next push

        def read(ch: Change, got: tuple[bytes, str] | None = None) -> tuple[bytes, str, bool] | None:
            got = got or read_only(ch)
            if got is None:
                return None
            data, sha = got
            # A base with this content means it is committed, so its blob is
            # kept remote; checked again on every attempt, after each rebase.
            with claim:
                fresh = sha not in uploaded and not self.state.has_blob(sha)
                if fresh:
                    uploaded.add(sha)
            return data, sha, fresh

        def send(ch: Change, got: tuple[bytes, str, bool] | None) -> Change | None:
            try:
                if got is None:
                    return None
                data, sha, fresh = got
                if fresh and not upload_blob(s, self.layout, sha, data):
                    with claim:
                        found.add(sha)
                return ch if sha == ch.sha256 else Change(ch.path, "put", sha, len(data))
            finally:
                progress.advance(1, ch.size)

        def read_and_send(ch: Change) -> Change | None:
            return send(ch, read(ch))

        def send_read(ch: Change, got: tuple[bytes, str, bool]) -> Change | None:
            try:
                return send(ch, got)
            finally:
                ahead.release(len(got[0]))

        results: list[Change | Future[Change | None] | None] = []
        try:
            for ch in changes:
                if ch.op == "delete":
                    results.append(ch)
                elif ch.size > SMALL_FILE:
                    results.append(self._pool.submit(read_and_send, ch))
                elif ch.size <= inline_max and ch.size <= room:
                    raw = read_only(ch)
                    if raw is not None and len(raw[0]) <= inline_max and len(raw[0]) <= room:
                        data, sha = raw
                        if sha not in carried:  # a content is carried once per record
                            carried.add(sha)
                            room -= len(data)
                        progress.advance(1, ch.size)
                        results.append(Change(ch.path, "put", sha, len(data), data))
                    else:
                        results.append(send(ch, read(ch, raw) if raw is not None else None))
                else:
                    ahead.wait_for(ch.size)
                    got = read(ch)
                    if got is None or not got[2]:
                        results.append(send(ch, got))
                    else:
                        ahead.take(len(got[0]))
                        results.append(self._pool.submit(send_read, ch, got))
            out = [r.result() if isinstance(r, Future) else r for r in results]
        except BaseException:
            for r in results:
                if isinstance(r, Future):
                    r.cancel()
            raise
        self.tree.flush_stats()
        return [c for c in out if c is not None]


class _Budget:
    """Bytes held by work in flight: ``wait_for(n)`` blocks until ``n`` more
    fit (or nothing is held), ``take``/``release`` account for them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._cond = threading.Condition()

    def wait_for(self, n: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self.held == 0 or self.held + n <= self.limit)

    def take(self, n: int) -> None:
        with self._cond:
            self.held += n

    def release(self, n: int) -> None:
        with self._cond:
            self.held -= n
            self._cond.notify()
