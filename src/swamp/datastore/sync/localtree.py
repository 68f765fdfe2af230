"""The cache directory as the engine sees it: what a path holds now (through
the stat cache), atomic writes that never leave the cache, and deletes that
prune empty directories (an empty version directory would still count as a
version).

A path that cannot hold a file (it is a directory, or one of its parents is
a file) holds no file: for change detection it is absent, exactly like a
deleted file, so a directory replaced by a file (or a file by a directory)
is the delete of what was there plus the put of what is there now. Only a
write can find such a path in its way; it raises BlockedPath.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import stat as statmod
import time
from pathlib import Path
from typing import Callable, Iterator

from swamp.util import atomic
from swamp.util.atomic import TMP_PREFIX, DurableBatch, atomic_write, fsync_dir, mkstemp, temp_prefix
from swamp.util.plain import Frozen

from .localonly import LOCAL_ONLY_DIRS
from .state import SyncState

# A stat entry taken within this long of the file's mtime may hide a same-size
# rewrite in the same timestamp tick, so it is re-hashed next time.
RACY_NS = 2_000_000_000
_CHUNK = 1 << 20
#: temp names of batched writes: unique in this process (its pid is in the prefix)
_TEMP_SEQ = itertools.count()
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class BlockedPath(Exception):
    """A write found a directory at the path, or a file where a parent
    directory must be."""


class FileState(Frozen):
    __slots__ = ("sha256", "size")
    sha256: str
    size: int

    def __init__(self, sha256: str, size: int) -> None:
        object.__setattr__(self, "sha256", sha256)
        object.__setattr__(self, "size", size)


class LocalTree:
    def __init__(self, root: Path, state: SyncState) -> None:
        self.root = root
        self._real_root = os.path.realpath(root)
        self.state = state
        self._fresh: list[tuple[str, os.stat_result, str, int]] = []
        self._safe_dirs: set[Path] = set()

    def abspath(self, rel: str) -> Path:
        return self.root / rel

    # ------------------------------------------------------------------ reads
    def stat(self, rel: str) -> os.stat_result | None:
        """The stat of the file at ``rel``; None when no file is there (absent,
        a directory, or under a path that is a file)."""
        try:
            st = os.stat(self.abspath(rel))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return st if statmod.S_ISREG(st.st_mode) else None

    def current(self, rel: str, st: os.stat_result | None = None) -> FileState | None:
        """What ``rel`` holds now (``st``: its stat, when the caller has it)."""
        if st is None:
            st = self.stat(rel)
            if st is None:
                return None
        cached = self.state.stat_entry(rel)
        if (cached is not None and (cached.size, cached.mtime_ns, cached.ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
                and st.st_mtime_ns + RACY_NS <= cached.checked_ns):
            return FileState(cached.sha256, st.st_size)
        return self._hash(rel, self.abspath(rel))

    def _hash(self, rel: str, path: Path) -> FileState | None:
        for _ in range(5):
            checked = time.time_ns()
            h = hashlib.sha256()
            try:
                with open(path, "rb") as f:
                    before = os.fstat(f.fileno())
                    while chunk := f.read(_CHUNK):
                        h.update(chunk)
                after = os.stat(path)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                return None
            if (before.st_size, before.st_mtime_ns, before.st_ino) == (after.st_size, after.st_mtime_ns, after.st_ino):
                sha = h.hexdigest()
                self._fresh.append((rel, after, sha, checked))
                return FileState(sha, after.st_size)
        # rewritten under us again and again: report the last content, cache nothing
        return FileState(h.hexdigest(), after.st_size)

    def read(self, rel: str) -> tuple[bytes, str]:
        """Bytes and sha256 of ``rel``; the stat cache learns them when the
        file held still while it was read. (The stats are of the open file:
        if the path is renamed over meanwhile, the cache learns the inode
        that was read, which the path no longer matches.)"""
        checked = time.time_ns()
        fd = os.open(self.abspath(rel), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            before = os.fstat(fd)
            chunks = [os.read(fd, before.st_size + 1)]
            while chunks[-1]:
                chunks.append(os.read(fd, _CHUNK))
            after = os.fstat(fd)
        finally:
            os.close(fd)
        data = chunks[0] if len(chunks) == 2 else b"".join(chunks)
        sha = hashlib.sha256(data).hexdigest()
        if before.st_size == after.st_size == len(data) and before.st_mtime_ns == after.st_mtime_ns:
            self._fresh.append((rel, after, sha, checked))
        return data, sha

    def read_whole(self, rel: str):
        """``read`` into an anonymous memory map instead of a bytes object:
        (the map, its sha256); the caller closes the map. A map is returned
        to the system when closed, where a large bytes object freed by one
        of many threads stays in that thread's malloc arena (a push of many
        files of a few MiB would keep one per transfer thread). An empty
        file, or one that changes size while read, comes back as ``read``
        gives it (bytes)."""
        import mmap

        checked = time.time_ns()
        fd = os.open(self.abspath(rel), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            before = os.fstat(fd)
            if before.st_size == 0:
                return self.read(rel)
            buf = mmap.mmap(-1, before.st_size)
            try:
                with open(fd, "rb", buffering=0, closefd=False) as f:
                    got = f.readinto(buf)
                    more = f.read(1)
                after = os.fstat(fd)
            except BaseException:
                buf.close()
                raise
        finally:
            os.close(fd)
        if got != before.st_size or more:
            buf.close()
            return self.read(rel)  # changed size while read: read it again, as bytes
        sha = hashlib.sha256(buf).hexdigest()
        if before.st_size == after.st_size and before.st_mtime_ns == after.st_mtime_ns:
            self._fresh.append((rel, after, sha, checked))
        return buf, sha

    def flush_stats(self) -> None:
        """Persist what hashing learnt (one transaction)."""
        fresh, self._fresh = self._fresh, []
        self.state.record_stats(fresh)

    def remember(self, rel: str, st: os.stat_result, sha256: str) -> None:
        self._fresh.append((rel, st, sha256, time.time_ns()))

    def walk(self) -> Iterator[str]:
        for dirpath, dirnames, filenames in os.walk(self.root):
            if dirpath == str(self.root):
                dirnames[:] = [d for d in dirnames if d not in LOCAL_ONLY_DIRS]
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            for name in sorted(filenames):
                if not name.startswith(TMP_PREFIX):
                    yield name if rel_dir == "." else f"{rel_dir}/{name}"

    def files_under(self, rel: str) -> list[str]:
        path = self.abspath(rel)
        if not path.is_dir() or path.is_symlink():
            return []
        out = []
        for dirpath, _dirs, filenames in os.walk(path):
            rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            out += [f"{rel_dir}/{n}" for n in filenames if not n.startswith(TMP_PREFIX)]
        return out

    # ----------------------------------------------------------------- writes
    def _checked_parent(self, rel: str, batch: DurableBatch | None = None) -> Path:
        path = self.abspath(rel)
        parent = path.parent
        if parent not in self._safe_dirs:
            try:
                if batch is None:
                    parent.mkdir(parents=True, exist_ok=True)
                else:
                    batch.makedirs(parent)
            except (FileExistsError, NotADirectoryError):
                raise BlockedPath(rel) from None
            real = os.path.realpath(parent)
            if real != self._real_root and not real.startswith(self._real_root + os.sep):
                raise BlockedPath(f"{rel} resolves outside the cache")  # a symlinked directory
            self._safe_dirs.add(parent)
        if path.is_dir() and not path.is_symlink():
            raise BlockedPath(rel)
        return path

    def forget_dirs(self) -> None:
        """Check parents afresh from now on (they may have changed on disk)."""
        self._safe_dirs.clear()

    def write(self, rel: str, data: bytes, batch: DurableBatch | None = None,
              check: Callable[[], None] | None = None) -> os.stat_result:
        """Atomic write (readers never see a torn file); returns its stat.
        Durable on return, or, with ``batch``, once ``batch.sync()`` returns.
        BlockedPath when the path cannot hold a file, including when another
        writer turns it (or a parent) into a directory (or a file) meanwhile.
        ``check()`` runs right before the rename; if it raises, the path is
        left as it is."""
        if check is not None and batch is None:
            own = DurableBatch()
            st = self.write(rel, data, own, check)
            own.sync()
            return st
        if batch is not None:
            return self._write_batched(rel, data, batch, check)
        path = self._checked_parent(rel)
        try:
            atomic_write(path, data)
            return os.stat(path)
        except (IsADirectoryError, NotADirectoryError, FileExistsError):
            raise BlockedPath(rel) from None

    def _write_batched(self, rel: str, data: bytes, batch: DurableBatch,
                       check: Callable[[], None] | None) -> os.stat_result:
        """``write`` into a batch (a pull's many small files), with less work
        per file than ``batch.write``: the parent is made and checked once per
        directory and pull, the target is not stat'ed first (a directory in
        the way fails the rename: BlockedPath all the same), and the temp
        file is named from a counter, not mkstemp's random names. What stays:
        a temp file beside the path, written and fsynced, ``check()``, the
        rename; the directory is fsynced once, at ``batch.sync()``."""
        path = self.abspath(rel)
        parent = path.parent
        if parent not in self._safe_dirs:
            self._checked_parent(rel, batch)  # mkdir -p inside the cache, or BlockedPath
        prefix = f"{parent}{os.sep}{temp_prefix()}w"
        fd = -1
        for _ in range(3):
            tmp = f"{prefix}{next(_TEMP_SEQ)}"
            try:
                fd = os.open(tmp, _CREATE, 0o600)
                break
            except FileExistsError:
                continue  # left by a dead writer whose pid we have again
            except (FileNotFoundError, NotADirectoryError):
                break  # the directory went away meanwhile
        if fd < 0:  # the general path makes the directory again
            self._safe_dirs.discard(parent)
            try:
                return batch.write(self._checked_parent(rel, batch), data, before_replace=check)
            except (IsADirectoryError, NotADirectoryError, FileExistsError):
                raise BlockedPath(rel) from None
        try:
            st = atomic.fill_and_replace(fd, tmp, path, data, before_replace=check)
        except (IsADirectoryError, NotADirectoryError, FileExistsError):
            raise BlockedPath(rel) from None  # a directory in the way of the rename
        batch.touched(parent)
        return st

    def write_from(self, rel: str, fill: Callable[[Path], None], batch: DurableBatch | None = None) -> os.stat_result:
        """``write`` for a content too large to hold in memory: ``fill(tmp)``
        writes a temp file beside ``rel`` (and makes it durable), which then
        replaces ``rel`` atomically. Returns the stat of the file put in
        place; the temp file is removed when ``fill`` raises."""
        path = self._checked_parent(rel, batch)
        fd, tmp = mkstemp(path.parent, temp_prefix())
        os.close(fd)
        try:
            fill(Path(tmp))
            st = os.stat(tmp)
            os.replace(tmp, path)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(e, (IsADirectoryError, NotADirectoryError, FileExistsError)):
                raise BlockedPath(rel) from None
            raise
        if batch is not None:
            batch.touched(path.parent)
        else:
            fsync_dir(path.parent)
        return st

    def remove(self, rel: str, batch: DurableBatch | None = None) -> None:
        """Delete the file and prune emptied directories; with ``batch``, the
        directory that loses the entry is fsynced at ``batch.sync()``."""
        path = self.abspath(rel)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, IsADirectoryError):
            path.unlink()
        last = self._prune(path.parent)
        if batch is not None:
            batch.touched(last)

    def move_aside(self, rel: str, to_rel: str) -> None:
        """Rename the local file (atomic; the content is never copied)."""
        os.replace(self.abspath(rel), self._checked_parent(to_rel))

    def move_out(self, rel: str, to_rel: str) -> None:
        """``move_aside``, then prune the directories that emptied (an empty
        version directory would still count as a version)."""
        path = self.abspath(rel)
        if not path.is_file():
            raise FileNotFoundError(rel)
        self.move_aside(rel, to_rel)
        self._prune(path.parent)

    def _prune(self, directory: Path) -> Path:
        """Remove ``directory`` and its parents while empty; returns the
        first one left standing."""
        while directory != self.root and self.root in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return directory
            self._safe_dirs.discard(directory)
            directory = directory.parent
        return directory
