"""A local, disposable hint that makes finding the latest version cost the
same with 10 versions or 10,000: the highest claimed version number, stamped
with the name directory's mtime.

The tree stays the truth. Claiming or removing a version directory changes
the name directory's mtime, so a hint whose stamp differs is ignored and the
directory is listed again; a hint whose top version is not complete is
ignored too. A hint is written only once the directory's mtime is older than
the clock's granularity margin, so a change in the same tick as the listing
can never hide behind an equal stamp. Hints live under ``cache/`` (local
only, never synced)."""

from __future__ import annotations

import os
import time

from swamp.datastore.base import Datastore

SETTLED_S = 1.0


def _hint_rel(name_dir: str) -> str:
    return f"cache/latest/{name_dir}"


def read(ds: Datastore, name_dir: str, mtime_ns: int) -> int | None:
    try:
        stamp, top = ds.local_path(_hint_rel(name_dir)).read_text().split()
        return int(top) if int(stamp) == mtime_ns else None
    except (OSError, ValueError):
        return None


def write(ds: Datastore, name_dir: str, mtime_ns: int, top: int) -> None:
    if time.time() - mtime_ns / 1e9 < SETTLED_S:
        return
    path = ds.local_path(_hint_rel(name_dir))
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(f"{mtime_ns} {top}")
        os.replace(tmp, path)  # no fsync: a lost hint costs one listing
    except OSError:
        pass
