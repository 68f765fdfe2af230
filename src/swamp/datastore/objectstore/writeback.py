"""Starting the disk's write-back of a download while it is still arriving.

A pulled file is fsynced before it is put in place under its name
(docs/sync.md, durability). Left alone, the kernel holds its pages dirty
until that fsync, which then waits for the whole file to reach the disk
after the last byte came in. Asking the kernel to start writing each few
MiB as soon as they are written (posix_fadvise DONTNEED starts write-back
of dirty pages without waiting for it) overlaps the disk with the network,
so the fsync finds little left to do. Durability is unchanged: the fsync
still runs, and still decides."""

from __future__ import annotations

import os

#: bytes written between two write-back starts: small enough that the disk
#: keeps pace with the network, large enough that the calls cost nothing
WRITEBACK_STEP = 2 << 20

_ADVISE = getattr(os, "posix_fadvise", None)
_DONTNEED = getattr(os, "POSIX_FADV_DONTNEED", None)


class Writeback:
    """Follows one destination file; ``written(f, size)`` after each write."""

    def __init__(self) -> None:
        self.started = 0  # bytes whose write-back was asked for

    def written(self, f, size: int) -> None:
        if _ADVISE is None or size - self.started < WRITEBACK_STEP:
            return
        f.flush()  # the bytes must be the kernel's before it can write them back
        try:
            _ADVISE(f.fileno(), self.started, size - self.started, _DONTNEED)
        except (OSError, ValueError):
            return  # only a hint: a file system that refuses it is fsynced as before
        self.started = size
