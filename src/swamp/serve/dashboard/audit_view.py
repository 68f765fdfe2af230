"""Reading the audit log back, newest first, for the dashboard's audit
page: only its tail is read (the log only grows), so a long log costs no
more than a short one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

#: how much of the log's end the page looks at
TAIL_BYTES = 4 * 1024 * 1024


def entries(path: Path | None, keep: Callable[[dict], bool], *, offset: int, limit: int) -> tuple[list[dict], bool]:
    """(entries offset..offset+limit of those ``keep`` accepts, newest
    first; whether there are more)."""
    if path is None:
        return [], False
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except FileNotFoundError:
        return [], False
    lines = data.split(b"\n")
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first one is cut
    out: list[dict] = []
    skipped = 0
    for line in reversed(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or not keep(entry):
            continue
        if skipped < offset:
            skipped += 1
            continue
        if len(out) == limit:
            return out, True
        out.append(entry)
    return out, False
