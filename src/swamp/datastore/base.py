"""The Datastore interface: the one seam between swamp's domain code and
where bytes live. Everything above (models, data, workflows) reads and writes
through it; the filesystem datastore and the cached (object-store) datastore
implement it.

Paths are datastore-relative, '/'-separated and validated (no '..', not
absolute). Writes are atomic. Every mutation is reported through
``_mark_dirty`` before it happens, which is the hook a sync engine uses to
find what changed without walking the tree.
"""

from __future__ import annotations

import abc
import contextlib
import os
import threading
import time
from pathlib import Path
from typing import BinaryIO, Iterator, Sequence

from swamp.datastore.sync.counts import SyncCounts
from swamp.datastore.sync.held import HeldLocks
from swamp.errors import NotFoundError
from swamp.util.atomic import atomic_writer, sweep_temp_files
from swamp.util.names import check_rel_path

#: opening a datastore sweeps temp files left by killed writers at most this often
SWEEP_EVERY_S = 3600.0
#: local only (under cache/): when the last sweep started
SWEEP_MARKER = "cache/temp-sweep"
#: paths local_path keeps built (a bound: clearing costs only rebuilding them)
PATHS_KEPT = 4096


class Datastore(abc.ABC):
    kind: str = "abstract"
    #: the local directory that holds the files (the datastore itself, or a cache)
    root: Path

    def __init__(self, root: Path | str, held: HeldLocks | None = None) -> None:
        self.root = Path(root).absolute()
        self.root.mkdir(parents=True, exist_ok=True)
        #: the one record of the locks this process holds here
        self.held = held if held is not None else HeldLocks()
        self._swept = False

    def _sweep_now_and_then(self) -> None:
        """Remove the temp files of writers killed mid-write (never one a
        live writer holds: see util.atomic.sweep_temp_files). Done before
        the first write of each opened datastore (a command that writes
        nothing leaves nothing behind), walking the tree at most once per
        SWEEP_EVERY_S, so it costs one stat."""
        if self._swept:
            return
        self._swept = True
        marker = self.root / SWEEP_MARKER
        try:
            if time.time() - marker.stat().st_mtime < SWEEP_EVERY_S:
                return
        except FileNotFoundError:
            pass
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()  # first, so that concurrent openers do not all walk
            sweep_temp_files(self.root)
        except OSError:
            pass  # a read-only datastore: nothing to sweep there anyway

    # ---------------------------------------------------------------- paths
    def local_path(self, rel: str) -> Path:
        # A read looks up the same few paths again and again (swamp serve:
        # every request); building a Path is most of what a stat costs here.
        kept = self.__dict__.get("_paths")
        if kept is None or kept[0] is not self.root:  # (kept per root: a root set anew starts afresh)
            kept = self._paths = (self.root, {})
        paths = kept[1]
        hit = paths.get(rel) if type(rel) is str else None
        if hit is not None:
            return hit
        p = self.root / check_rel_path(rel)
        if len(paths) >= PATHS_KEPT:
            paths.clear()
        paths[rel] = p
        return p

    # ---------------------------------------------------------------- reads
    def read_bytes(self, rel: str) -> bytes:
        p = self.local_path(rel)
        try:
            return p.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"{rel} not found in the datastore") from None

    def exists(self, rel: str) -> bool:
        return self.local_path(rel).exists()

    def listdir(self, rel: str = "") -> list[str]:
        """Sorted names of the entries directly under ``rel`` ([] if absent)."""
        p = self.local_path(rel) if rel else self.root
        try:
            return sorted(n for n in os.listdir(p) if not n.startswith(".tmp-"))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def walk(self, rel: str = "") -> Iterator[str]:
        """Relative paths of all files under ``rel``, sorted per directory."""
        base = self.local_path(rel) if rel else self.root
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            relbase = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            for name in sorted(filenames):
                if name.startswith(".tmp-"):
                    continue
                yield name if relbase == "." else f"{relbase}/{name}"

    # --------------------------------------------------------------- writes
    def write_bytes(self, rel: str, data: bytes) -> None:
        with self.open_write(rel) as f:
            f.write(data)

    @contextlib.contextmanager
    def open_write(self, rel: str) -> Iterator[BinaryIO]:
        """A streaming, atomic writer: readers see the file only once it is
        complete."""
        path = self.local_path(rel)
        self._sweep_now_and_then()
        self._mark_dirty(rel)
        with atomic_writer(path) as f:
            yield f
        # Marked again once written: a push that consumed the first mark
        # before the bytes landed still finds the path journaled afterwards.
        self._mark_dirty(rel)

    @contextlib.contextmanager
    def editing(self, rel: str) -> Iterator[None]:
        """Hold off every other process's edit of ``rel`` on this machine
        while the caller reads it, changes it and writes it back, so a
        read-modify-write never writes over a copy that changed under it.
        (The cached datastore holds its pulls off too.)"""
        import fcntl

        from swamp.util.digest import sha256_hex

        directory = self.root / "cache" / "edits"  # local only, never synced
        directory.mkdir(parents=True, exist_ok=True)
        name = sha256_hex(check_rel_path(rel).encode())[:24] + ".lock"
        fd = os.open(directory / name, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # dies with its process: kill -9 never leaves it held
            yield
        finally:
            os.close(fd)

    def delete(self, rel: str) -> None:
        """Delete a file or a whole directory tree; a missing path is fine."""
        path = self.local_path(rel)
        self._sweep_now_and_then()
        if path.is_dir() and not path.is_symlink():
            for sub in list(self.walk(rel)):
                self._mark_dirty(sub)
            import shutil  # here: shutil (bz2, lzma, zlib) costs a read-only command 2 ms

            shutil.rmtree(path, ignore_errors=True)
            # Then the directory itself: that also deletes the committed files
            # a lazily hydrated cache never fetched. Only now, so that a kill
            # in between leaves at worst a content file without metadata, never a
            # visible version whose content was deleted.
            self._mark_dirty(rel)
        else:
            self._mark_dirty(rel)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            self._mark_dirty(rel)  # as for writes: a push in between still sees it afterwards
        self._prune_empty_parents(path.parent)

    def _prune_empty_parents(self, directory: Path) -> None:
        root = self.root.resolve()
        d = directory
        while True:
            try:
                if d.resolve() == root or root not in d.resolve().parents:
                    return
                d.rmdir()
            except OSError:
                return
            d = d.parent

    def mkdir(self, rel: str, *, exist_ok: bool = True) -> None:
        """Create a directory. With ``exist_ok=False`` this is an atomic claim:
        FileExistsError tells the caller someone else got there first."""
        self._sweep_now_and_then()
        self.local_path(rel).mkdir(parents=True, exist_ok=exist_ok)

    # ------------------------------------------------------- change tracking
    def _mark_dirty(self, rel: str) -> None:
        """Called before every mutation of ``rel``. The filesystem datastore
        has nothing to sync; the cached datastore journals the path."""

    # ---------------------------------------------------------------- locks
    @contextlib.contextmanager
    def lock(self, name: str, *, timeout_ms: int | None = None, cancelled: threading.Event | None = None):
        """A context manager holding the named lock (or lease); its
        owner names it (``swamp.models.leases``, ``workflows.records.run_lock``). Waiting longer than the timeout
        raises LockTimeoutError (exit 75) naming the holder; ``cancelled``
        set meanwhile ends the wait with a SwampError coded ``cancelled``,
        nothing taken (sync/lease.py). A thread that
        already holds the lock takes it again at no cost (a workflow step
        holding a model's lock calling the runner)."""
        if self.held.reenter(name):
            try:
                yield None
            finally:
                self.held.leave(name)
            return
        with self._acquire(name, timeout_ms, cancelled) as held:
            yield held

    @abc.abstractmethod
    def _acquire(self, name: str, timeout_ms: int | None, cancelled: threading.Event | None):
        """A context manager that holds the lock for real (file or lease)
        and records it in ``self.held`` meanwhile."""

    @abc.abstractmethod
    def lock_status(self) -> list[dict]:
        """Every lock currently held: name, holder, host, pid, acquiredAt, ttlMs."""

    @abc.abstractmethod
    def force_release(self, name: str) -> bool:
        """Break a lock; returns whether one was held."""

    # ------------------------------------------------------------ lifecycle
    @contextlib.contextmanager
    def session(
        self,
        *,
        mutating: bool,
        locks: Sequence[str] = (),
        command: str = "",
        offline: bool = False,
    ) -> Iterator[SyncCounts]:
        """The command lifecycle. Holds ``locks`` (sorted, so two commands
        never deadlock), and for a shared datastore pulls before and pushes
        after a mutating body. Yields the sync counts, filled in as it goes."""
        counts = SyncCounts()
        with contextlib.ExitStack() as stack:
            for name in sorted(set(locks)):
                stack.enter_context(self.lock(name))
            yield counts

    def status(self) -> dict:
        return {"type": self.kind, "location": str(self.root)}
