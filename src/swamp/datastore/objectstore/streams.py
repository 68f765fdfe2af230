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

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

COPY_CHUNK = 1 << 20
#: the slowest link a transfer is allowed to run at before it times out
MIN_RATE = 1 << 20  # bytes per second


def transfer_timeout_s(size: int, base_s: float, min_rate: int = MIN_RATE) -> float:
    """The time a request moving ``size`` bytes may take."""
    return base_s + max(0, size) / max(1, min_rate)


@dataclass(frozen=True)
class Download:
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


def open_dest(dest: Path) -> BinaryIO:
    """The destination of a download, emptied: a retry starts it over."""
    return open(dest, "wb")


def finish_dest(f: BinaryIO, fsync: bool) -> None:
    f.flush()
    if fsync:
        os.fsync(f.fileno())


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(COPY_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def read_chunks(path: Path, chunk: int = COPY_CHUNK):
    with open(path, "rb") as f:
        while piece := f.read(chunk):
            yield piece
