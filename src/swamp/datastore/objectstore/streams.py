"""Streaming transfers between local files and objects: the pieces every
backend shares (put_file / get_file in base.ObjectStore).

A file is never held whole in memory: it moves in pieces of COPY_CHUNK (or a
backend's part size), and a download is hashed (sha256) as it is written, so
the caller can check it against the hash it expected before putting the
file in place.

Timeouts scale with size: a fixed 30 s limit on one request would fail every
large transfer on a slow link, and a limit large enough for 5 GiB would let
a dead small request hang for an hour. A request moving ``n`` bytes gets
``base + n / MIN_RATE``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO, NamedTuple

COPY_CHUNK = 1 << 20
#: the slowest link a transfer is allowed to run at before it times out
MIN_RATE = 1 << 20  # bytes per second


def transfer_timeout_s(size: int, base_s: float, min_rate: int = MIN_RATE) -> float:
    """The time a request moving ``size`` bytes may take."""
    return base_s + max(0, size) / max(1, min_rate)


class Download(NamedTuple):  # not a dataclass: dataclasses imports inspect (~4 ms of a command)
    """What get_file wrote: its sha256 (hex), its size, and the ETag of the
    object version it came from."""

    sha256: str
    size: int
    etag: str


class HashingWriter:
    """A binary file that hashes what goes through it. ``write`` takes any
    buffer (bytes, memoryview, obstore's Bytes)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        import hashlib  # not at import: loading OpenSSL costs a read-only command 2 ms

        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, chunk) -> int:
        view = memoryview(chunk)
        self.hash.update(view)
        self.f.write(view)
        self.size += view.nbytes
        return view.nbytes

    def flush(self) -> None:
        self.f.flush()

    def result(self, etag: str) -> Download:
        return Download(self.hash.hexdigest(), self.size, etag)


class Mismatch(Exception):
    """The bytes read from a file are not the ones the caller hashed: the
    file changed since. Backends turn it into swamp.errors.SourceChanged."""


class HashingReader(io.RawIOBase):
    """A file read once, front to back, by an upload; when ``sha256`` is
    given, the read that reaches the expected size (or the end) checks the
    hash and raises Mismatch instead of returning the last bytes, so the
    upload fails before its final request and nothing is stored."""

    def __init__(self, f: BinaryIO, size: int, sha256: str | None) -> None:
        self.f = f
        self.size = size
        self.expected = sha256
        import hashlib

        self.hash = hashlib.sha256()
        self.pos = 0
        self.mismatch = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        if (whence, offset) in ((0, self.pos), (1, 0)):
            return self.pos
        raise io.UnsupportedOperation("an upload stream is read once, in order")

    def read(self, n: int = -1) -> bytes:
        left = self.size - self.pos
        want = left if n is None or n < 0 else min(n, left)
        data = self.f.read(want) if want > 0 else b""
        self.hash.update(data)
        self.pos += len(data)
        if self.expected is not None and (self.pos == self.size or not data):
            if self.pos != self.size or self.f.read(1) or self.hash.hexdigest() != self.expected:
                self.mismatch = True
                raise Mismatch("the file changed while it was being uploaded")
            self.expected = None  # checked once; later reads just say "end"
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


def open_dest(dest: Path) -> BinaryIO:
    """The destination of a download, emptied: a retry starts it over."""
    return open(dest, "wb")


def finish_dest(f: BinaryIO, fsync: bool) -> None:
    f.flush()
    if fsync:
        os.fsync(f.fileno())


def file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(COPY_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def read_chunks(path: Path, chunk: int = COPY_CHUNK):
    with open(path, "rb") as f:
        while piece := f.read(chunk):
            yield piece
