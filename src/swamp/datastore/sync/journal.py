"""The dirty-path journal (``.sync/dirty``): every mutating write appends the
path *before* it writes, so a push looks at those paths instead of walking
the tree. One short O_APPEND write per path: safe across processes.

A push takes the journal by renaming it aside; new marks go to a fresh file.
The taken files are removed only after the push is recorded, so a killed push
leaves them for the next one. A ``*`` line (or too many lines, or a line that
does not parse) means "walk everything".
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from swamp.errors import ValidationError
from swamp.util.names import check_rel_path

BULK = "*"
MAX_ENTRIES = 50_000
_TAKEN = "dirty.taken-"


@dataclass
class Taken:
    files: list[Path] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)
    bulk: bool = False


class Journal:
    def __init__(self, sync_dir: Path) -> None:
        self.dir = sync_dir
        self.path = sync_dir / "dirty"

    def append(self, rel: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (rel + "\n").encode("utf-8"))
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
            os.replace(self.path, self.dir / f"{_TAKEN}{uuid.uuid4().hex}")
        files = self._taken_files()
        return self._read(files, Taken(files=files))

    def peek(self) -> Taken:
        return self._read([*self._taken_files(), self.path], Taken())

    def done(self, taken: Taken) -> None:
        for f in taken.files:
            with contextlib.suppress(FileNotFoundError):
                f.unlink()
