"""Lease scopes on disk (``.sync/held/``, local only): which paths were
written under which lease holding, readable by every process on the cache.

Each holding this cache's processes take gets one file,
``.sync/held/<nonce>.scope``: a JSON header line (lease name, nonce, host,
pid, machine), written whole by rename, then one line per path its holder marks
dirty, appended as the journal is (one short O_APPEND write per mark, on a
descriptor kept open for the holding's life). ``*`` stands for everything.
A line ``/published <seq>`` (never a path: paths are relative) records a
commit made under the holding by any process on the cache, so the holder
never says "nothing was published" once one landed. A line ``/left <path>``
says a path left the scope: a renumbering moved the version written there
away, and what lands there next (another version of ours moving down) was
not written under the holding. Lines apply in order.
A last line without its newline is a write cut short by a crash: the mark
precedes the write it announces, so nothing was written under it; ignored.

The holder removes its file when it leaves the lease (after taking back
what a lost lease kept). A file whose holder is gone (killed) stays until
nothing it names differs from its base any more (fencing.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from swamp.util.ids import hostname, uuid4_hex
from swamp.util.plain import Plain

from .holders import holder_exited, machine_identity

DIR = "held"
_SUFFIX = ".scope"
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ALL = "*"
_PUBLISHED = "/published "
_LEFT = "/left "


class Holding(Plain):
    """A holding as its scope file describes it."""

    __slots__ = ("name", "nonce", "host", "pid", "machine", "written", "published", "path")
    name: str
    nonce: str
    host: str
    pid: int
    machine: str | None
    written: set[str]
    #: seqs of the commits made under it (by any process on the cache)
    published: list[int]
    path: Path | None

    def __init__(self, name: str, nonce: str, host: str, pid: int, machine: str | None = None,
                 written: set[str] | None = None, published: list[int] | None = None,
                 path: Path | None = None) -> None:
        self.name = name
        self.nonce = nonce
        self.host = host
        self.pid = pid
        self.machine = machine
        self.written = set() if written is None else written
        self.published = [] if published is None else published
        self.path = path

    def alive(self) -> bool:
        """Whether its holder may still be running: judged as a lease's
        holder is (holders.holder_exited: only a pid on this very machine and
        PID namespace is looked up; anything else counts as running)."""
        return not holder_exited({"host": self.host, "pid": self.pid, "machine": self.machine})


class ScopeFile:
    """The holder's side: created when the lease is taken, appended to as
    paths are marked under it, removed when the lease is left."""

    def __init__(self, sync_dir: Path, name: str, nonce: str) -> None:
        d = sync_dir / DIR
        d.mkdir(exist_ok=True)
        self.path = d / f"{nonce}{_SUFFIX}"
        tmp = d / f".tmp-{uuid4_hex()}"
        header = json.dumps({"lease": name, "nonce": nonce, "host": hostname(), "pid": os.getpid(),
                             "machine": machine_identity(os.getpid())})
        with open(tmp, "wb") as f:
            f.write(header.encode("utf-8") + b"\n")
        os.replace(tmp, self.path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def add(self, rel: str) -> None:
        if self._fd is not None:
            os.write(self._fd, ((rel or ALL) + "\n").encode("utf-8"))

    def follow(self, steps: list[tuple[bool, str]]) -> None:
        """Record ``steps`` (joined?, path) in order (a renumbering)."""
        if self._fd is not None and steps:
            os.write(self._fd, "".join(line + "\n" for line in _step_lines(steps)).encode("utf-8"))

    def remove(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def follow(sync_dir: Path, nonce: str, steps: list[tuple[bool, str]]) -> None:
    """Record ``steps`` (joined?, path), in order, in the scope of holding
    ``nonce``: a pull in any process renumbered versions, and paths joined
    or left it; nothing if it has no file."""
    _append_lines(sync_dir, nonce, _step_lines(steps))


def _step_lines(steps: list[tuple[bool, str]]) -> list[str]:
    return [(rel or ALL) if joined else f"{_LEFT}{rel}" for joined, rel in steps]


def _append_lines(sync_dir: Path, nonce: str, lines: list[str]) -> None:
    if not lines or not _NONCE_RE.match(nonce):
        return
    try:
        fd = os.open(sync_dir / DIR / f"{nonce}{_SUFFIX}", os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        return
    try:
        os.write(fd, "".join(line + "\n" for line in lines).encode("utf-8"))
    finally:
        os.close(fd)


def published(sync_dir: Path, nonce: str, seq: int) -> None:
    """Record that commit ``seq`` was made under holding ``nonce``."""
    _append_lines(sync_dir, nonce, [f"{_PUBLISHED}{seq}"])


def load(sync_dir: Path) -> list[Holding]:
    """Every holding with a scope file on this cache, in no set order."""
    try:
        files = sorted((sync_dir / DIR).glob(f"*{_SUFFIX}"))
    except OSError:
        return []
    return [h for h in map(_read, files) if h is not None]


def load_one(sync_dir: Path, nonce: str) -> Holding | None:
    """Holding ``nonce`` as its scope file says now (with what other
    processes' renumberings recorded in it), or None without one."""
    if not _NONCE_RE.match(nonce):
        return None
    return _read(sync_dir / DIR / f"{nonce}{_SUFFIX}")


def _read(f: Path) -> Holding | None:
    try:
        raw = f.read_bytes()
    except FileNotFoundError:
        return None  # its holder left meanwhile
    lines = raw.decode("utf-8", "replace").split("\n")[:-1]  # the last, unterminated piece is ignored
    if not lines:
        return None
    try:
        head = json.loads(lines[0])
        h = Holding(str(head["lease"]), str(head["nonce"]), str(head["host"]), int(head["pid"]),
                    head.get("machine"), path=f)
    except (ValueError, KeyError, TypeError):
        return None  # not one of ours
    for line in lines[1:]:
        if line.startswith(_PUBLISHED):
            with contextlib.suppress(ValueError):
                h.published.append(int(line[len(_PUBLISHED):]))
        elif line.startswith(_LEFT):
            h.written.discard(line[len(_LEFT):])
        elif line:
            h.written.add("" if line == ALL else line)
    return h
