"""Atomic file writes: temp file in the same directory, fsync, rename, fsync
the directory. A reader sees the old file or the new one, never a torn one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator

# Tests may turn fsync off for speed (never in production).
_FSYNC = os.environ.get("SWAMP_FSYNC", "1") != "0"
TMP_PREFIX = ".tmp-"


def fsync_dir(directory: Path) -> None:
    if not _FSYNC:
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path | str, data: bytes | str, *, mode: int | None = None) -> None:
    if isinstance(data, str):
        data = data.encode()
    with atomic_writer(path, mode=mode) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_writer(path: Path | str, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """Yield a binary file; on clean exit it replaces ``path`` atomically.
    On an exception the temp file is removed and ``path`` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if _FSYNC:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def sweep_temp_files(directory: Path, older_than_s: float = 3600.0) -> int:
    """Remove temp files left by writers that were killed mid-write."""
    import time

    removed = 0
    cutoff = time.time() - older_than_s
    for root, _dirs, files in os.walk(directory):
        for name in files:
            if name.startswith(TMP_PREFIX):
                p = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    if os.stat(p).st_mtime < cutoff:
                        os.unlink(p)
                        removed += 1
    return removed
