"""Transfers: the blobs of a push, uploaded concurrently and create-only,
each content once, each file read, hashed and sent by one of the
transfer threads; blobs found already stored are protected from
a concurrent gc before the commit relies on them. Files larger than
SMALL_FILE stream, both ways (the store's put_file / get_file): they are
never held in memory, whatever their size.

``Transfers`` is the engine's collaborator for both directions; one
``_Sending`` carries one upload of a push (its inline room, the blobs
found stored, the contents lost to a rewrite)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from pathlib import Path
from typing import Callable

from swamp.datastore.objectstore.streams import COPY_CHUNK
from swamp.errors import SourceChanged, SwampError
from swamp.util.atomic import DurableBatch

from .blobs import fetch_blob_file, upload_blob, upload_blob_file
from .commitlog import INLINE_MAX_LAZY, INLINE_TOTAL, Change
from .counting import Session
from .engine_state import SMALL_FILE, EngineState
from .gc import protect
from .localtree import BlockedPath
from .pool import Pool
from .pool import Future
from .progress import Progress

#: (SMALL_FILE, from engine_state.py: files up to it are read whole, and
#: hashed, by a transfer thread; larger ones stream, push and pull)
#: a push reads a file up to this size whole, once (hashing it as it goes),
#: and sends those bytes, under _STREAMS: one read and one hash where
#: streaming it takes two of each (hash to name the blob, then send while
#: checking the hash again). A single PUT's body is held in memory by the
#: S3 client anyway (s3.py: up to its 16 MiB multipart threshold), so this
#: holds no more than streaming did. Larger files stream.
WHOLE_MAX = 16 << 20
#: large uploads moving at once in one process: each holds a few of the
#: store's parts in memory, so this bounds a push's memory with many of them
_STREAMS = threading.BoundedSemaphore(4)
#: large downloads moving at once in one process. A download holds one
#: chunk of the stream in memory (about 1 MiB), so this bounds the load on
#: the server and the disk rather than memory. It is taken for the transfer
#: only: the fsync that follows runs outside it, so the next download
#: starts while the disk writes the last one back.
_DOWNLOADS = threading.BoundedSemaphore(8)


class Transfers:
    def __init__(self, ctx: EngineState) -> None:
        self.ctx = ctx

    def place_blob(self, s: Session, sha: str, size: int, rels: list[str],
                   batch: DurableBatch | None, before: Callable[[], None] | None = None,
                   ) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
        """Download the blob ``sha`` once, streaming, and put it at each of
        ``rels`` atomically (the hash is checked and the file made durable
        before it is put in place; ``before()`` runs right before the first
        is). Returns (the paths written with their stat, the paths a
        directory or file stood in the way of)."""
        tree, layout = self.ctx.tree, self.ctx.layout
        placed: list[tuple[str, os.stat_result]] = []
        blocked: list[str] = []
        for rel in rels:
            source = tree.abspath(placed[0][0]) if placed else None

            def fill(tmp: Path) -> None:
                # Another path with this content is copied locally, unless
                # it was changed under us meanwhile: then it is fetched.
                if source is None or not copy_checked(source, tmp, sha):
                    with _DOWNLOADS:
                        fetch_blob_file(s, layout, sha, tmp, size, fsync=False)
                    fsync_file(tmp)  # durable before write_from renames it into place
                if before is not None and not placed:
                    before()

            try:
                placed.append((rel, tree.write_from(rel, fill, batch)))
            except BlockedPath:
                blocked.append(rel)
        return placed, blocked

    def upload(self, s: Session, changes: list[Change], uploaded: set[str], inline_max: int = 0) -> list[Change]:
        """Upload the blobs of ``changes`` (concurrently, create-only, each
        content once); a file of at most ``inline_max`` bytes may go inline
        in the record instead (``_Sending``). Returns the changes as
        uploaded, with their sha256: a file rewritten since the diff is
        committed with the bytes sent.

        Blobs found already stored (412) are then protected from a concurrent
        gc, right before the commit that relies on them (gc.protect); one a gc
        swept since the 412 is uploaded again."""
        found: set[str] = set()
        out = _Sending(self.ctx, s, uploaded, found, inline_max).run(changes)
        for _ in range(3):
            missing = protect(s, self.ctx.layout, found, self.ctx.pool)
            if not missing:
                return out
            uploaded -= missing
            found = set()
            again = {ch.path: ch for ch in _Sending(self.ctx, s, uploaded, found).run(
                [c for c in out if c.op == "put" and c.sha256 in missing])}
            out = [again.get(c.path) if c.op == "put" and c.sha256 in missing else c for c in out]
            out = [c for c in out if c is not None]
        raise SwampError("blobs this push relies on keep being swept by a concurrent gc",
                         hint="let the gc finish, then push again", code="push_contended")


class _Sending:
    """The uploads of one ``Transfers.upload`` pass; ``found`` gets the
    blobs that were already stored. A file of at most ``inline_max`` bytes
    (of at most INLINE_MAX_LAZY if it is lazily fetched content) goes inline
    in the commit record instead, while the commit's inline contents stay
    within INLINE_TOTAL (commitlog.py); whether its content is committed
    elsewhere does not matter (that may be inline too).

    A file going inline is read here, in order (the record's inline room is
    counted as they come); every other file is read, hashed and sent by one
    pool thread (hashing releases the GIL), so reading and hashing run as
    wide as the uploads instead of one thread feeding them. A pool thread
    holds one small file in memory at a time, or a few parts of a large one."""

    def __init__(self, ctx: EngineState, s: Session, uploaded: set[str], found: set[str],
                 inline_max: int = 0) -> None:
        self.ctx, self.s, self.uploaded, self.found, self.inline_max = ctx, s, uploaded, found, inline_max
        self.claim = threading.Lock()
        self.room = INLINE_TOTAL  # inline bytes this commit may still carry
        self.carried: set[str] = set()
        self.lost: set[str] = set()  # contents whose file changed while it was sent
        self.progress: Progress | None = None

    def run(self, changes: list[Change]) -> list[Change]:
        puts = [ch for ch in changes if ch.op == "put"]
        self.progress = Progress(self.ctx.on_progress, "upload", len(puts), sum(ch.size for ch in puts))
        pool: Pool = self.ctx.pool
        results: list[Change | Future[Change | None] | None] = []
        try:
            for ch in changes:
                if ch.op == "delete":
                    results.append(ch)
                elif ch.size > SMALL_FILE:
                    results.append(pool.submit(self._large_sender(ch), ch))
                elif ch.size <= self._limit(ch) and ch.size <= self.room:
                    results.append(self._inline_or_send(ch))
                else:
                    results.append(pool.submit(self._read_and_send, ch))
            out = [r.result() if isinstance(r, Future) else r for r in results]
        except BaseException:
            for r in results:
                if isinstance(r, Future):
                    r.cancel()
            raise
        self.ctx.tree.flush_stats()
        return self._without_lost([c for c in out if c is not None])

    def _large_sender(self, ch: Change) -> Callable[[Change], Change | None]:
        if not self.ctx.stream_large:
            return self._read_and_send
        return self._read_whole_and_send if ch.size <= WHOLE_MAX else self._stream

    def _limit(self, ch: Change) -> int:
        return min(self.inline_max, INLINE_MAX_LAZY) if self.ctx.rules.is_lazy(ch.path) else self.inline_max

    def _inline_or_send(self, ch: Change) -> Change | None:
        """A small file within the record's inline room: carried inline,
        else (it grew since the diff) sent as a blob."""
        raw = self._read_only(ch)
        if raw is not None and len(raw[0]) <= self._limit(ch) and len(raw[0]) <= self.room:
            data, sha = raw
            if sha not in self.carried:  # a content is carried once per record
                self.carried.add(sha)
                self.room -= len(data)
            self.progress.advance(1, ch.size)
            return Change(ch.path, "put", sha, len(data), data)
        return self._send(ch, self._read(ch, raw) if raw is not None else None)

    def _without_lost(self, out: list[Change]) -> list[Change]:
        """Drop the changes relying on a blob lost to a rewrite while it was
        sent; they are journaled for the next push."""
        lost = self.lost
        if not lost:
            return out
        self.uploaded -= lost
        for c in out:
            if c.op == "put" and c.sha256 in lost and c.inline is None:
                self.ctx.journal.append(c.path)  # relied on the blob that was not stored
        return [c for c in out if not (c.op == "put" and c.sha256 in lost and c.inline is None)]

    def _claim_fresh(self, sha: str) -> bool:
        """Whether this pass is the one to send ``sha``. A base with this
        content means it is committed, so its blob is kept remote; checked
        again on every attempt, after each rebase."""
        with self.claim:
            fresh = sha not in self.uploaded and not self.ctx.state.has_blob(sha)
            if fresh:
                self.uploaded.add(sha)
        return fresh

    def _read_only(self, ch: Change) -> tuple[bytes, str] | None:
        try:
            return self.ctx.tree.read(ch.path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None  # gone since the diff; its delete is journaled for the next push

    def _read(self, ch: Change, got: tuple[bytes, str] | None = None) -> tuple[bytes, str, bool] | None:
        got = got or self._read_only(ch)
        if got is None:
            return None
        data, sha = got
        return data, sha, self._claim_fresh(sha)

    def _send(self, ch: Change, got: tuple[bytes, str, bool] | None) -> Change | None:
        try:
            if got is None:
                return None
            data, sha, fresh = got
            if fresh and not upload_blob(self.s, self.ctx.layout, sha, data):
                with self.claim:
                    self.found.add(sha)
            return ch if sha == ch.sha256 else Change(ch.path, "put", sha, len(data))
        finally:
            self.progress.advance(1, ch.size)

    def _read_and_send(self, ch: Change) -> Change | None:
        return self._send(ch, self._read(ch))

    def _read_whole_and_send(self, ch: Change) -> Change | None:
        tree = self.ctx.tree
        st = tree.stat(ch.path)
        if st is not None and st.st_size > WHOLE_MAX:
            return self._stream(ch)  # grew since the diff
        with _STREAMS:  # a few whole files in memory at once
            try:
                buf, sha = tree.read_whole(ch.path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return self._send(ch, None)  # gone since the diff; its delete is journaled for the next push
            if isinstance(buf, bytes):
                return self._send(ch, self._read(ch, (buf, sha)))
            try:
                # read-only: the store sends it as it is, without a copy
                with memoryview(buf).toreadonly() as view:
                    return self._send(ch, self._read(ch, (view, sha)))
            finally:
                with contextlib.suppress(BufferError):  # still referenced: freed with its last reference
                    buf.close()

    def _stream(self, ch: Change) -> Change | None:
        # Hashed by streaming it (or from the stat cache), then sent
        # from the file in pieces: never whole in memory.
        tree = self.ctx.tree
        try:
            st = tree.stat(ch.path)
            cur = tree.current(ch.path, st) if st is not None else None
            if cur is None:
                return None  # gone since the diff: journaled by the caller's stat check
            sha = cur.sha256
            if self._claim_fresh(sha):
                try:
                    with _STREAMS:
                        stored = upload_blob_file(self.s, self.ctx.layout, sha, tree.abspath(ch.path), cur.size)
                except SourceChanged:
                    # Rewritten after it was hashed: nothing was stored.
                    # Left for the next push, with any path relying on it.
                    with self.claim:
                        self.lost.add(sha)
                    self.ctx.journal.append(ch.path)
                    return None
                if not stored:
                    with self.claim:
                        self.found.add(sha)
            return ch if (sha, cur.size) == (ch.sha256, ch.size) else Change(ch.path, "put", sha, cur.size)
        finally:
            self.progress.advance(1, ch.size)


def fsync_file(path: Path) -> None:
    """Make the file at ``path`` durable (its data and size)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy_checked(source: Path, dest: Path, sha: str) -> bool:
    """Copy ``source`` into ``dest`` (made durable); False, and ``dest``
    holding junk, when what was copied is not ``sha``."""
    h = hashlib.sha256()
    try:
        with open(source, "rb") as src, open(dest, "wb") as out:
            while chunk := src.read(COPY_CHUNK):
                h.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except OSError:
        return False
    return h.hexdigest() == sha
