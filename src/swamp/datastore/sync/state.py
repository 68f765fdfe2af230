"""Local sync state in ``<cache>/.sync/state.db`` (SQLite, never synced).

- ``head``: the last commit applied to this cache;
- ``base``: per path, the sha256/size last seen committed (the tree at
  ``head``), plus ``hydrated`` (0 when a lazy cache has not fetched it yet)
  and ``src``: where its content is kept remotely, '' for its blob, or
  ``log:<seq>`` / ``checkpoint:<seq>`` for a record that carries it inline;
- ``stat``: (size, mtime_ns, inode) -> sha256, so unchanged files are never
  re-hashed; ``checked_ns`` says when, to distrust racy entries;
- ``pending``: the commit this cache is about to create, so a push killed
  after its commit point recognises its own commit on the next pull;
- ``intent``: what a pull is about to write (path, sha256 or '' for a
  delete), recorded before it touches the disk, so a file left by a killed
  pull is known to come from the remote and is not mistaken for a local edit;
- ``tip``: the id of the commit at ``head`` (the parent id the next commit
  names) and the ETag of its record, valid only while its seq is ``head``;
- ``remote``: the identity of the remote this state describes, and
  ``seen``: the highest seq this cache ever saw there. A remote with another
  identity, or whose log ends below ``seen``, is not this state's remote.

``head`` and the bases it implies always change in one transaction. WAL mode
keeps every transaction intact across a kill -9.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Iterator

from swamp.util.plain import Frozen

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS base (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
    hydrated INTEGER NOT NULL DEFAULT 1, src TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS base_sha ON base(sha256);
CREATE TABLE IF NOT EXISTS stat (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL, sha256 TEXT NOT NULL, checked_ns INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS intent (path TEXT NOT NULL, sha256 TEXT NOT NULL,
    PRIMARY KEY (path, sha256)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS conflict (
    saved_as TEXT PRIMARY KEY, path TEXT NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS own (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS copy (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL) WITHOUT ROWID;
"""


class Base(Frozen):
    __slots__ = ("sha256", "size", "hydrated", "src")
    sha256: str
    size: int
    hydrated: bool
    #: '' (a blob) or the record carrying the content inline (``log:<seq>``)
    src: str

    def __init__(self, sha256: str, size: int, hydrated: bool = True, src: str = "") -> None:
        _set = object.__setattr__
        _set(self, "sha256", sha256)
        _set(self, "size", size)
        _set(self, "hydrated", hydrated)
        _set(self, "src", src)


class StatEntry(Frozen):
    __slots__ = ("size", "mtime_ns", "ino", "sha256", "checked_ns")
    size: int
    mtime_ns: int
    ino: int
    sha256: str
    checked_ns: int

    def __init__(self, size: int, mtime_ns: int, ino: int, sha256: str, checked_ns: int) -> None:
        _set = object.__setattr__
        _set(self, "size", size)
        _set(self, "mtime_ns", mtime_ns)
        _set(self, "ino", ino)
        _set(self, "sha256", sha256)
        _set(self, "checked_ns", checked_ns)


def _range_end(prefix: str) -> str:
    # every string that starts with ``prefix`` sorts in [prefix, prefix+U+10FFFF)
    return prefix + "\U0010ffff"


class SyncState:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
        self._lock = threading.RLock()
        self._depth = 0
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self.transaction():
            for stmt in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(stmt)
            if self._db.execute("SELECT 1 FROM meta WHERE k='head'").fetchone() is None \
                    and self._db.execute("SELECT 1 FROM base LIMIT 1").fetchone() is None:
                # A fresh state records what it publishes as its own from
                # the start (origin.py); an older one does not know.
                self._db.execute("INSERT OR IGNORE INTO meta(k, v) VALUES ('authorship', '1')")
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(base)")}
            if "src" not in columns:  # a cache from before inline contents: all blobs
                self._db.execute("ALTER TABLE base ADD COLUMN src TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything inside commits together or not at all (nests)."""
        with self._lock:
            if self._depth == 0:
                self._db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self._db.execute("ROLLBACK")
                raise
            self._depth -= 1
            if self._depth == 0:
                self._db.execute("COMMIT")

    def _q(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # -------------------------------------------------------------------- meta
    def get_meta(self, key: str) -> str | None:
        rows = self._q("SELECT v FROM meta WHERE k=?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self._q("DELETE FROM meta WHERE k=?", (key,))
        else:
            self._q("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", (key, value))

    @property
    def head(self) -> int:
        return int(self.get_meta("head") or 0)

    def set_head(self, seq: int) -> None:
        self.set_meta("head", str(seq))

    def tip(self) -> tuple[str | None, str | None]:
        """(id, ETag) of the commit at ``head``; (None, None) when unknown
        (state from an older swamp, or a kill between the two writes)."""
        _head, _seen, tip_id, tip_etag = self.position()
        return tip_id, tip_etag

    def set_tip(self, seq: int, commit_id: str | None, etag: str | None) -> None:
        self.set_meta("tip", json.dumps({"seq": seq, "id": commit_id, "etag": etag}))

    def fenced(self) -> dict[str, dict[str, int]]:
        """Lease holdings the log fenced: lease -> {nonce: seq of the epoch
        record} (commitlog.fenced_out)."""
        raw = self.get_meta("fenced")
        return json.loads(raw) if raw else {}

    def set_fenced(self, fenced: dict[str, dict[str, int]]) -> None:
        self.set_meta("fenced", json.dumps(fenced, sort_keys=True) if fenced else None)

    @property
    def seen(self) -> int:
        """The highest seq this cache ever saw in the remote's log (at least ``head``)."""
        return self.position()[1]

    def position(self) -> tuple[int, int, str | None, str | None]:
        """(head, seen, tip id, tip ETag), read together in one query: a pull
        that finds nothing new (every read of serve on a shared datastore)
        needs all four; ``tip()`` and ``seen`` are views of it. The tip
        counts only while its seq is the head."""
        meta = dict(self._q("SELECT k, v FROM meta WHERE k IN ('head', 'seen', 'tip')"))
        head = int(meta.get("head") or 0)
        tip = json.loads(meta["tip"]) if meta.get("tip") else {}
        tip_id, tip_etag = (tip.get("id"), tip.get("etag")) if tip.get("seq") == head else (None, None)
        return head, max(int(meta.get("seen") or 0), head), tip_id, tip_etag

    def saw(self, seq: int) -> None:
        if seq > self.seen:
            self.set_meta("seen", str(seq))

    def forget_remote(self) -> None:
        """Start afresh against a remote that is not the one this state
        described: no head, no bases, nothing pending, so the next push
        publishes every file and skips nothing as uploaded before. The peer
        name, the stat cache and the conflict copies stay."""
        with self.transaction():
            for key in ("head", "tip", "seen", "remote", "tracking", "pending", "format", "fenced"):
                self.set_meta(key, None)
            self._q("DELETE FROM base")
            self._q("DELETE FROM intent")
            self._q("DELETE FROM own")
            self.set_meta("authorship", "1")  # known from here on

    @property
    def tracking(self) -> bool:
        """True once a full walk has been pushed: from then on the dirty
        journal alone says what changed."""
        return self.get_meta("tracking") == "1"

    def pending(self) -> dict[str, int]:
        """Commit ids this cache tried to create (id -> seq) and has not seen
        applied yet: any of them found in the log is ours."""
        raw = self.get_meta("pending")
        return json.loads(raw) if raw else {}

    def add_pending(self, commit_id: str, seq: int) -> None:
        self.set_meta("pending", json.dumps({**self.pending(), commit_id: seq}))

    def clear_pending(self, upto: int) -> None:
        left = {k: v for k, v in self.pending().items() if v > upto}
        self.set_meta("pending", json.dumps(left) if left else None)

    # -------------------------------------------------------------------- base
    def base(self, path: str) -> Base | None:
        rows = self._q("SELECT sha256, size, hydrated, src FROM base WHERE path=?", (path,))
        return Base(rows[0][0], rows[0][1], bool(rows[0][2]), rows[0][3]) if rows else None

    def set_base(self, path: str, sha256: str, size: int, *, hydrated: bool = True, src: str = "") -> None:
        self._q("INSERT OR REPLACE INTO base(path, sha256, size, hydrated, src) VALUES (?, ?, ?, ?, ?)",
                (path, sha256, size, int(hydrated), src))

    def set_bases(self, rows: Iterable[tuple[str, str, int, bool, str]]) -> None:
        """Many ``set_base`` at once: (path, sha256, size, hydrated, src) rows."""
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO base(path, sha256, size, hydrated, src) VALUES (?, ?, ?, ?, ?)",
                ((p, sha, size, int(h), src) for p, sha, size, h, src in rows))

    def drop_bases(self, paths: Iterable[str]) -> None:
        keys = [(p,) for p in paths]
        with self._lock:
            self._db.executemany("DELETE FROM base WHERE path=?", keys)
            self._db.executemany("DELETE FROM stat WHERE path=?", keys)

    def bases(self, paths: Iterable[str]) -> dict[str, Base]:
        """The bases of those of ``paths`` that have one (a few statements
        for any number of paths)."""
        paths = list(paths)
        out: dict[str, Base] = {}
        for i in range(0, len(paths), 500):
            chunk = paths[i:i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._q(f"SELECT path, sha256, size, hydrated, src FROM base WHERE path IN ({marks})",
                           tuple(chunk))
            out.update((p, Base(s, z, bool(h), src)) for p, s, z, h, src in rows)
        return out

    def all_bases(self) -> dict[str, Base]:
        return {p: Base(s, z, bool(h), src)
                for p, s, z, h, src in self._q("SELECT path, sha256, size, hydrated, src FROM base")}

    def base_paths_under(self, directory: str) -> list[str]:
        lo = directory.rstrip("/") + "/"
        return [r[0] for r in self._q("SELECT path FROM base WHERE path >= ? AND path < ?", (lo, _range_end(lo)))]

    def mark_blobs_stored(self, rows: list[tuple[str, str]]) -> None:
        """(path, sha256): that committed content is now a blob too (a
        checkpoint writer stored it), if the base still has it."""
        if rows:
            with self._lock:
                self._db.executemany("UPDATE base SET src='' WHERE path=? AND sha256=?", rows)

    def has_blob(self, sha256: str) -> bool:
        """A committed path has this content as a blob, so the blob is
        already remote (content committed inline has none)."""
        return bool(self._q("SELECT 1 FROM base WHERE sha256=? AND src='' LIMIT 1", (sha256,)))

    def mark_hydrated(self, path: str) -> None:
        """The local file at (or under) ``path`` is now authoritative."""
        lo = path.rstrip("/") + "/"
        self._q("UPDATE base SET hydrated=1 WHERE hydrated=0 AND (path=? OR (path >= ? AND path < ?))",
                (path, lo, _range_end(lo)))

    # -------------------------------------------------------------- stat cache
    def stat_entry(self, path: str) -> StatEntry | None:
        rows = self._q("SELECT size, mtime_ns, ino, sha256, checked_ns FROM stat WHERE path=?", (path,))
        return StatEntry(*rows[0]) if rows else None

    def record_stats(self, entries: Iterable[tuple[str, os.stat_result, str, int]]) -> None:
        """(path, stat, sha256, checked_ns) for files whose content we know."""
        rows = [(p, st.st_size, st.st_mtime_ns, st.st_ino, sha, checked) for p, st, sha, checked in entries]
        if rows:
            with self.transaction():
                with self._lock:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO stat(path, size, mtime_ns, ino, sha256, checked_ns)"
                        " VALUES (?, ?, ?, ?, ?, ?)", rows)

    # ----------------------------------------------------------------- intents
    def add_intents(self, items: Iterable[tuple[str, str | None]]) -> None:
        rows = [(p, sha or "") for p, sha in items]
        if rows:
            with self.transaction():
                with self._lock:
                    self._db.executemany("INSERT OR IGNORE INTO intent(path, sha256) VALUES (?, ?)", rows)

    def intents(self) -> dict[str, set[str | None]]:
        """path -> contents an interrupted pull may have left there."""
        out: dict[str, set[str | None]] = {}
        for p, sha in self._q("SELECT path, sha256 FROM intent"):
            out.setdefault(p, set()).add(sha or None)
        return out

    def clear_intents(self) -> None:
        self._q("DELETE FROM intent")

    # --------------------------------------------------------------- conflicts
    def add_conflict(self, saved_as: str, path: str, seq: int) -> None:
        self._q("INSERT OR REPLACE INTO conflict(saved_as, path, seq) VALUES (?, ?, ?)", (saved_as, path, seq))

    def conflicts(self) -> list[tuple[str, str, int]]:
        return [tuple(r) for r in self._q("SELECT saved_as, path, seq FROM conflict ORDER BY saved_as")]

    def drop_conflict(self, saved_as: str) -> None:
        self._q("DELETE FROM conflict WHERE saved_as=?", (saved_as,))

    # ------------------------------------------------------------------ origin
    # (origin.py) ``own``: contents this cache's pushes sent as its own
    # changes; ``copy``: files that were copies of other peers' work when
    # this cache attached again to a rewound remote, never published here.
    @property
    def knows_authorship(self) -> bool:
        """Whether ``own`` covers everything this cache published (a state
        from before it was recorded does not know)."""
        return self.get_meta("authorship") == "1"

    def add_own(self, rows: Iterable[tuple[str, str]]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO own(path, sha256) VALUES (?, ?)", rows)

    def own(self) -> dict[str, str]:
        return dict(self._q("SELECT path, sha256 FROM own"))

    def set_copies(self, rows: Iterable[tuple[str, str]]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO copy(path, sha256) VALUES (?, ?)", rows)

    def copies(self, paths: Iterable[str] | None = None) -> dict[str, str]:
        """path -> sha256 of the copies recorded (of ``paths`` only, if given)."""
        if paths is None:
            return dict(self._q("SELECT path, sha256 FROM copy"))
        if not self._q("SELECT 1 FROM copy LIMIT 1"):
            return {}  # the usual case: no statement per path
        paths = list(paths)
        out: dict[str, str] = {}
        for i in range(0, len(paths), 500):
            chunk = paths[i:i + 500]
            out.update(self._q(f"SELECT path, sha256 FROM copy WHERE path IN ({','.join('?' * len(chunk))})",
                               tuple(chunk)))
        return out

    def drop_copies(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._db.executemany("DELETE FROM copy WHERE path=?", ((p,) for p in paths))
