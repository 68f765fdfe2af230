"""What the sync engine's collaborators share, handed to each explicitly:
the store and its layout, the cache (its local tree, state, journal and
lock), the path rules, the transfer pool and the options of the engine.
Each collaborator (pull.py, commit.py, transfers.py, fencing.py, ...) reads
these; none reaches another collaborator through it: the engine wires those
together (engine.py) and they call each other's public methods only."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Iterator

from swamp.datastore.objectstore.base import ObjectStore
from swamp.util.plain import Plain

from .commitlog import HEAD_CURRENT_S
from .counting import Session
from .held import HeldLocks
from .journal import Journal
from .layout import Layout
from .localtree import LocalTree
from .pool import Pool
from .progress import ProgressHook
from .rules import PathRules
from .state import SyncState

#: files above this size stream (push and pull); defined here so the
#: state's ``streamed`` and transfers.py agree
SMALL_FILE = 256 << 10


class CacheLock:
    """One sync operation at a time on this cache, across threads and
    processes (flock dies with its process, so kill -9 never leaves it).
    Re-entrant within the process."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._mutex = threading.RLock()
        self._depth = 0
        self._fd = -1

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._mutex:
            if self._depth == 0:
                fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    os.close(self._fd)
                    self._fd = -1


class HeadSeen:
    """When this engine last saw that the log continues from its head: a
    pull listed it, or this engine created the commit at head. The commit
    point trusts ``head + 1`` as the tip (or a seq a peer holds: a 412) only
    on such a recent sighting, never a trimmed seq."""

    def __init__(self) -> None:
        self.current: tuple[int, float] | None = None  # (head, monotonic)

    def saw(self, head: int, at: float) -> None:
        self.current = (head, at)

    def forget(self) -> None:
        """As if the time since the last sighting had passed."""
        self.current = None

    def is_current(self, state: SyncState) -> bool:
        """Whether this engine saw, recently (HEAD_CURRENT_S), that the log
        continues from ``head``: a pull listed it (gc always keeps the
        commit at the newest checkpoint, so a listing after a trimmed head
        is never empty), or this engine created the commit at ``head``.
        Then ``head+1`` is the tip or a seq a peer holds (412), never a
        trimmed one."""
        current = self.current
        return (current is not None and current[0] == state.head
                and time.monotonic() - current[1] < HEAD_CURRENT_S
                and (state.head == 0 or state.tip()[0] is not None))

    def listed_since(self, state: SyncState, since: float) -> bool:
        """Whether a listing made at or after ``since`` (monotonic) saw the
        log continue from ``head`` (or this engine created the commit at
        ``head`` since then), so that ``head + 1`` is the tip or a seq a
        peer holds: a 412, never a trimmed seq nor a seq past the end of
        another chain. What a LIST shows of the remote's identity
        (identity.check_listing) is then at most one operation old, never a
        session's length."""
        current = self.current
        return current is not None and current[0] == state.head and current[1] >= since and self.is_current(state)


class EngineState(Plain):
    """The engine's shared state (see the module docstring)."""

    __slots__ = ("store", "root", "layout", "state", "tree", "journal", "rules", "pool", "lock", "peer",
                 "hydration", "checkpoint_every", "inline_max", "held", "head_seen", "renumbered", "on_progress",
                 "stream_large")
    store: ObjectStore
    root: Path
    layout: Layout
    state: SyncState
    tree: LocalTree
    journal: Journal
    rules: PathRules
    pool: Pool
    lock: CacheLock
    peer: str
    hydration: str
    checkpoint_every: int
    #: files up to this size travel inline in the commit record (0: never)
    inline_max: int
    #: the one record of the locks held in this process (the cached
    #: datastore's lock() shares it): which leases a thread writes under
    held: HeldLocks
    head_seen: HeadSeen
    #: paths a pull renumbered (renumber.py): a push pulling mid-way looks at them too
    renumbered: set[str]
    #: ``on_progress(phase, files_done, files_total, bytes_done, bytes_total)``
    #: during the transfers of pull and push (progress.py)
    on_progress: ProgressHook | None
    #: whether files above SMALL_FILE stream; False moves them as whole bytes
    #: in memory, as before streaming (kept for bench/sync_large_bench.py)
    stream_large: bool

    def __init__(self, *, store: ObjectStore, root: Path, layout: Layout, state: SyncState, tree: LocalTree,
                 journal: Journal, rules: PathRules, pool: Pool, lock: CacheLock, peer: str, hydration: str,
                 checkpoint_every: int, inline_max: int) -> None:
        self.store, self.root, self.layout, self.state, self.tree = store, root, layout, state, tree
        self.journal, self.rules, self.pool, self.lock, self.peer = journal, rules, pool, lock, peer
        self.hydration, self.checkpoint_every, self.inline_max = hydration, checkpoint_every, inline_max
        self.held = HeldLocks()
        self.head_seen = HeadSeen()
        self.renumbered: set[str] = set()
        self.on_progress = None
        self.stream_large = True

    @property
    def sync_dir(self) -> Path:
        return self.root / ".sync"

    def session(self) -> Session:
        return Session(self.store)

    def exclusive(self):
        """The cache's lock (CacheLock.held)."""
        return self.lock.held()

    def streamed(self, size: int) -> bool:
        return self.stream_large and size > SMALL_FILE
