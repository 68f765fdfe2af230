"""Stamps of files and directories, for caches that a long-running process
(swamp serve) keeps of what it read from them: a cached answer is reused
while every stamp it was built from is unchanged.

A stamp is (mtime_ns, size, inode). A directory's mtime changes when a
name in it is added, removed or renamed; a file's stamp changes when it is
rewritten in place (mtime, size) or replaced by a rename (inode). The one
change a stamp can miss is a same-size rewrite within the filesystem's
timestamp tick (the kernel's clock is coarse): so a stamp younger than
RACY_NS when taken is not trusted, and whatever was built from it is read
again next time (the same rule as the sync engine's stat cache)."""

from __future__ import annotations

import os
import time

#: a stamp this close to the time it was taken may hide a rewrite in the same tick
RACY_NS = 2_000_000_000

Stamp = tuple  # (mtime_ns, size, inode), or None for a missing path


def stamp_of(path) -> Stamp | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def settled(stamps, taken_ns: int) -> bool:
    """Whether every stamp (None for a missing path) was old enough when taken to be trusted."""
    return all(s is None or s[0] + RACY_NS <= taken_ns for s in stamps)


def now_ns() -> int:
    return time.time_ns()


def tree_dirs(root) -> list[tuple[str, Stamp | None]]:
    """``root`` and every directory under it (as ``Path.rglob`` walks them:
    links to directories followed, each real directory once), each with
    its stamp taken before it was listed: a name added afterwards changes
    the stamp."""
    out: list[tuple[str, Stamp | None]] = []
    seen: set[str] = set()
    todo = [os.fspath(root)]
    while todo:
        d = todo.pop()
        real = os.path.realpath(d)
        if real in seen:
            continue
        seen.add(real)
        out.append((d, stamp_of(d)))
        try:
            with os.scandir(d) as it:
                todo.extend(e.path for e in it if e.is_dir())
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
    return out


def unchanged(stamped) -> bool:
    """Whether every (path, stamp) still has that stamp."""
    return all(stamp_of(p) == s for p, s in stamped)
