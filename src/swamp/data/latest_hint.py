"""A local, disposable hint that makes finding the latest version cost the
same with 10 versions or 10,000: the highest claimed version number, stamped
with the name directory's mtime.

The tree stays the truth. Claiming or removing a version directory changes
the name directory's mtime, so a hint whose stamp differs is ignored and the
directory is listed again; a hint whose top version is not complete is
ignored too. A hint is written only once the directory's mtime is older than
the clock's granularity margin, so a change in the same tick as the listing
can never hide behind an equal stamp. Hints live under ``cache/`` (local
only, never synced), and the process remembers the ones it read or wrote
under the same stamp rule, so a long-lived process (serve) reads a name's
hint file once, not on every read."""

from __future__ import annotations

import os
import time
from pathlib import Path

from swamp.datastore.base import Datastore

SETTLED_S = 1.0


def _hint_rel(name_dir: str) -> str:
    return f"cache/latest/{name_dir}"


#: hint file path -> (stamp, top): what this process read or wrote there
_remembered: dict[Path, tuple[int, int]] = {}
#: past this many names the memory starts again (a hint costs one file read)
REMEMBERED_MAX = 4096


def _remember(path: Path, stamp: int, top: int) -> None:
    if len(_remembered) >= REMEMBERED_MAX:
        _remembered.clear()
    _remembered[path] = (stamp, top)


def read(ds: Datastore, name_dir: str, mtime_ns: int) -> int | None:
    path = ds.local_path(_hint_rel(name_dir))
    known = _remembered.get(path)
    if known is not None and known[0] == mtime_ns:
        return known[1]
    try:
        stamp, top = (int(word) for word in path.read_text().split())
    except (OSError, ValueError):
        return None
    if stamp != mtime_ns:
        return None
    _remember(path, stamp, top)
    return top


def write(ds: Datastore, name_dir: str, mtime_ns: int, top: int) -> None:
    if time.time() - mtime_ns / 1e9 < SETTLED_S:
        return
    path = ds.local_path(_hint_rel(name_dir))
    _remember(path, mtime_ns, top)
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(f"{mtime_ns} {top}")
        os.replace(tmp, path)  # no fsync: a lost hint costs one listing
    except OSError:
        pass
