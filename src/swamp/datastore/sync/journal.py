"""The dirty-path journal (``.sync/dirty``): every mutating write appends the
path *before* it writes, so a push looks at those paths instead of walking
the tree. One short O_APPEND write per path: safe across processes.

A push takes the journal by renaming it aside; new marks go to a fresh file.
The taken files are removed only after the push is recorded, so a killed push
leaves them for the next one. A ``*`` line (or too many lines, or a line that
does not parse) means "walk everything".

An append is open, then write: a push in another process may rename the
file aside, read it and delete it between the two, and the mark would land
in a file nobody reads again. So after writing, the appender checks that the
name ``dirty`` still points at the file it wrote to (the open descriptor
keeps the inode alive, so its number cannot be reused meanwhile). If it
does, the rename aside comes after our write, and the push reads after its
rename: the mark is seen. If not, the mark is written again to the live
file. A path marked twice is harmless (the journal is a set).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from swamp.errors import ValidationError
from swamp.util.names import check_rel_path
from swamp.util.ids import uuid4_hex
from swamp.util.plain import Plain

BULK = "*"
MAX_ENTRIES = 50_000
_TAKEN = "dirty.taken-"
_TMP = "dirty.tmp-"
_LIVE_TRIES = 20


class Taken(Plain):
    __slots__ = ("files", "paths", "bulk")
    files: list[Path]
    paths: set[str]
    bulk: bool

    def __init__(self, files: list[Path] | None = None, paths: set[str] | None = None, bulk: bool = False) -> None:
        self.files = [] if files is None else files
        self.paths = set() if paths is None else paths
        self.bulk = bulk


class Journal:
    def __init__(self, sync_dir: Path) -> None:
        self.dir = sync_dir
        self.path = sync_dir / "dirty"

    def append(self, rel: str) -> None:
        line = (rel + "\n").encode("utf-8")
        for _ in range(_LIVE_TRIES):
            if self._append_live(line):
                return
        # Taken aside under us every time (a push loop racing a slow
        # writer): hand the mark over as a taken file of its own, which the
        # next take reads. It appears whole, by rename, or not at all.
        tmp = self.dir / f"{_TMP}{uuid4_hex()}"
        with open(tmp, "wb") as f:
            f.write(line)
        os.replace(tmp, self.dir / f"{_TAKEN}{uuid4_hex()}")

    def _append_live(self, line: bytes) -> bool:
        """Append ``line`` to ``dirty``; True if it was still the live
        journal after the write (so whoever takes it reads the line)."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            ours = os.fstat(fd)
            try:
                live = os.stat(self.path)
            except FileNotFoundError:
                return False
            return (live.st_dev, live.st_ino) == (ours.st_dev, ours.st_ino)
        finally:
            os.close(fd)

    def _read(self, files: list[Path], into: Taken) -> Taken:
        for f in files:
            try:
                lines = f.read_bytes().decode("utf-8", "replace").splitlines()
            except FileNotFoundError:
                continue
            for line in lines:
                if line == BULK:
                    into.bulk = True
                    continue
                try:
                    into.paths.add(check_rel_path(line))
                except ValidationError:
                    into.bulk = True  # torn or foreign line: trust nothing, walk
        if len(into.paths) > MAX_ENTRIES:
            into.bulk = True
            into.paths.clear()
        return into

    def _taken_files(self) -> list[Path]:
        return sorted(self.dir.glob(_TAKEN + "*"))

    def take(self) -> Taken:
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.path, self.dir / f"{_TAKEN}{uuid4_hex()}")
        files = self._taken_files()
        return self._read(files, Taken(files=files))

    def peek(self) -> Taken:
        return self._read([*self._taken_files(), self.path], Taken())

    def done(self, taken: Taken) -> None:
        for f in taken.files:
            with contextlib.suppress(FileNotFoundError):
                f.unlink()
