"""Atomic file writes: temp file in the same directory, fsync, rename, fsync
the directory. A reader sees the old file or the new one, never a torn one.

``DurableBatch`` writes many files the same way but fsyncs each directory
once for the whole batch instead of once per file."""

from __future__ import annotations

import contextlib
import os
from _thread import allocate_lock  # threading.Lock, without loading threading (data get never needs it)
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

# Tests may turn fsync off for speed (never in production).
_FSYNC = os.environ.get("SWAMP_FSYNC", "1") != "0"
TMP_PREFIX = ".tmp-"
_HOST_TAG: str | None = None


def _host_tag() -> str:
    global _HOST_TAG
    if _HOST_TAG is None:
        from swamp.util.digest import sha256_hex
        from swamp.util.ids import hostname

        _HOST_TAG = sha256_hex(hostname().encode())[:8]
    return _HOST_TAG


def temp_prefix() -> str:
    """``.tmp-<host>.<pid>.``: whose temp file it is, so a sweep can tell
    one whose writer died on this host from one still being written."""
    return f"{TMP_PREFIX}{_host_tag()}.{os.getpid()}."


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


def atomic_write(path: Path | str, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (see ``atomic_writer``)."""
    if isinstance(data, str):
        data = data.encode()
    with atomic_writer(path, mode=mode, durable=durable) as f:
        f.write(data)


_UMASK: int | None = None


def _default_mode() -> int:
    """What ``open()`` would give a new file: 0666 less the process umask
    (mkstemp's 0600 would make files meant for git private to one user),
    never writable by the group or others (util/file_modes.py: the
    entry points restrict the umask; this holds for library use too)."""
    global _UMASK
    if _UMASK is None:
        try:
            with open("/proc/self/status") as f:  # reads it without changing it
                _UMASK = next(int(line.split()[1], 8) for line in f if line.startswith("Umask:"))
        except (OSError, StopIteration, ValueError):
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return 0o666 & ~(_UMASK | 0o022)


def temp_beside(path: Path, makedirs: Callable[[Path], None]) -> tuple[int, str]:
    """A new temp file in ``path``'s directory, made when it is missing:
    (fd, name). (Creating first and making the directory only when that
    fails spares a mkdir per write, most of which go to a directory that
    exists.) A directory another process removes once it is empty (a
    marker's, a pruned data directory) can vanish between the mkdir and the
    create; then it is made again."""
    for attempt in range(6):
        try:
            return mkstemp(path.parent, temp_prefix())
        except (FileNotFoundError, NotADirectoryError):
            if attempt == 5:
                raise
            makedirs(path.parent)  # a file in the way raises here, as before
    raise AssertionError("unreachable")


_CREATE = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)


def mkstemp(directory: Path | str, prefix: str) -> tuple[int, str]:
    """``tempfile.mkstemp(dir=directory, prefix=prefix)``: a new file, only
    its owner may read it (0600), created exclusively under a random name;
    (fd, absolute name). Without the tempfile module, whose import (with
    shutil, random and the compression modules) costs a command ~2 ms."""
    directory = os.path.abspath(directory)
    for _ in range(100):
        name = os.path.join(directory, prefix + os.urandom(6).hex())
        try:
            return os.open(name, _CREATE, 0o600), name
        except FileExistsError:
            continue  # taken: another name
    raise FileExistsError(f"no usable temporary file name found in {directory}")


@contextlib.contextmanager
def atomic_writer(path: Path | str, *, mode: int | None = None, durable: bool = True) -> Iterator[BinaryIO]:
    """Yield a binary file; on clean exit it replaces ``path`` atomically.
    On an exception the temp file is removed and ``path`` is untouched.
    The file gets ``mode``, or by default what ``open()`` would give it
    (secrets pass 0o600). ``durable=False`` skips the two fsyncs, for a file
    that means nothing after a crash of the machine (a marker of a running
    process): still atomic, a reader never sees it torn."""
    path = Path(path)
    fd, tmp = temp_beside(path, lambda d: d.mkdir(parents=True, exist_ok=True))
    try:
        os.fchmod(fd, _default_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if _FSYNC and durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def fill_and_replace(fd: int, tmp: str, path: Path | str, data: bytes, *, mode: int | None = None,
                     before_replace: Callable[[], None] | None = None) -> os.stat_result:
    """Write ``data`` into the open temp file ``fd`` (named ``tmp``, beside
    ``path``), make it durable, close it, call ``before_replace`` (a last
    look that may refuse), then put it in place of ``path``. Returns its
    stat. The temp file never outlives a failure; the directory is the
    caller's to fsync."""
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if _FSYNC:
            os.fsync(fd)
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return st


class DurableBatch:
    """Atomic writes that become durable together.

    Each ``write`` is atomic on its own, exactly like ``atomic_write``: a
    temp file in the same directory, written, fsynced, then renamed over the
    target, so a reader sees the old file or the new one, never a torn one,
    and a kill -9 at any instant leaves one or the other. What a write leaves
    out is the fsync of its directory: the batch remembers every directory
    whose entries changed (the parents of written files and of directories
    it created, and whatever ``touched`` reports) and ``sync()`` fsyncs each
    of them once, instead of once per file.

    Until ``sync()`` returns, a power failure may undo a rename (never tear a
    file): record nothing that claims the batch's files before that. Safe to
    use from several threads at once.
    """

    def __init__(self) -> None:
        self._dirs: set[Path] = set()
        self._lock = allocate_lock()

    def touched(self, directory: Path | str) -> None:
        """Entries of ``directory`` changed (a file removed or renamed, a
        directory created or removed): fsync it at ``sync()``."""
        with self._lock:
            self._dirs.add(Path(directory))

    def makedirs(self, directory: Path | str) -> None:
        """``mkdir -p``, remembering the parent of every directory created."""
        directory = Path(directory)
        if directory.is_dir():
            return
        missing = []
        d = directory
        while not os.path.lexists(d) and d != d.parent:
            missing.append(d)
            d = d.parent
        directory.mkdir(parents=True, exist_ok=True)
        for d in missing:
            self.touched(d.parent)

    def write(self, path: Path | str, data: bytes | str, *, mode: int | None = None,
              before_replace: Callable[[], None] | None = None) -> os.stat_result:
        """Replace ``path`` with ``data`` atomically, its bytes durable on
        return and its name once ``sync()`` returns. Returns the stat of the
        file written, taken before the rename (which keeps inode, size and
        mtime), so a file someone renames over it later does not match.
        ``before_replace()`` runs right before the rename; if it raises,
        nothing replaces ``path``."""
        if isinstance(data, str):
            data = data.encode()
        path = Path(path)
        fd, tmp = temp_beside(path, self.makedirs)
        st = fill_and_replace(fd, tmp, path, data, mode=mode, before_replace=before_replace)
        self.touched(path.parent)
        return st

    def sync(self, map_fn: Callable[[Callable[[Path], None], Iterable[Path]], Iterable[object]] = map) -> int:
        """Fsync every directory touched since the last ``sync()``, each
        once (``map_fn``: e.g. an executor's ``map``, to fsync them
        concurrently). Returns how many."""
        with self._lock:
            dirs, self._dirs = self._dirs, set()
        for _ in map_fn(fsync_dir, sorted(dirs)):
            pass
        return len(dirs)


#: a temp file whose writer cannot be checked (another host, an older name)
#: is abandoned once untouched this long: a live writer's writes move its mtime
ABANDONED_AFTER_S = 24 * 3600.0


def _abandoned(name: str, mtime: float, now: float, older_than_s: float) -> bool:
    parts = name[len(TMP_PREFIX):].split(".", 2)
    if len(parts) == 3 and parts[0] == _host_tag() and parts[1].isdigit():
        pid = int(parts[1])
        if pid == os.getpid():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True  # its writer on this host is gone
        except OSError:
            pass  # alive, someone else's
        return False  # its writer on this host is alive: never, however old
    return now - mtime > older_than_s


def sweep_temp_files(directory: Path, older_than_s: float = ABANDONED_AFTER_S) -> int:
    """Remove temp files left by writers that were killed mid-write: those
    whose writer was a process of this host that no longer exists, and
    those no writer touched for ``older_than_s`` whose writer cannot be
    checked. A temp file a live writer of this host holds is never removed."""
    import time

    removed = 0
    now = time.time()
    for root, _dirs, files in os.walk(directory):
        for name in files:
            if name.startswith(TMP_PREFIX):
                p = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    if _abandoned(name, os.stat(p).st_mtime, now, older_than_s):
                        os.unlink(p)
                        removed += 1
    return removed
