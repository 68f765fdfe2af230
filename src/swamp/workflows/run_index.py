"""The persisted index of a workflow's run records: a summary row per
record, keyed by the record file's size and modification time, so a page
of runs out of thousands costs one listing and one stat per run and reads
only the records that changed since the last page. Run ids are random, so
the newest runs can only be found by looking at every record: a first page
before anything is indexed reads only the newest records (by file time: a
record is written when its run starts and after, never before). Serve's
run history, its dashboard and its look for waits to resume keep one each.

The caller holds a read session (``app.lifecycle.reading``); the index
itself only reads files."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path

from swamp.errors import NotFoundError, SwampError
from swamp.workflows import records

_PREFIX, _SUFFIX = "workflow-run-", ".yaml"


def _summary(doc: dict) -> dict:
    steps = [s for j in doc.get("jobs") or [] for s in j.get("steps") or []]
    return {"id": doc.get("id"), "workflowName": doc.get("workflowName"), "status": doc.get("status"),
            "startedAt": doc.get("startedAt") or "", "completedAt": doc.get("completedAt"),
            "durationMs": doc.get("durationMs"), "parentRunId": doc.get("parentRunId"),
            "steps": len(steps), "failedSteps": sum(s.get("status") == "failed" for s in steps),
            "waiting": sum(s.get("status") in ("waiting_approval", "waiting_signal") for s in steps),
            "initiatedBy": doc.get("initiatedBy")}


def _read_row(ds, wid: str, rid: str) -> dict | None:
    """One run's row, read from its record."""
    try:
        doc = json.loads(ds.read_bytes(records.record_path(wid, rid)))
    except (NotFoundError, ValueError):
        # hand-edited YAML, or gone meanwhile: the slow, exact way
        try:
            doc = records.load(ds, wid, rid).to_json()
        except SwampError:
            return None
    return _summary(doc)


class RunIndex:
    """Summary rows of run records, kept fresh by file stamps (thread-safe).

    Records are written atomically (a rename into the directory), so a
    directory whose modification time has not moved holds the same files
    as when it was last read: its sorted rows are reused without a stat per
    record. A directory changed less than RACY_NS before it was read is
    read again the next time (a write in the same clock tick as the read
    would not move the time)."""

    RACY_NS = 1_000_000_000
    #: at most one save of a workflow's rows in this many seconds
    SAVE_EVERY_S = 5.0

    def __init__(self, store: Path | None = None) -> None:
        """``store``: a local directory (under cache/, never synced) where
        the rows are kept across restarts, so that the first page after a
        start reads only the records that changed meanwhile."""
        self.store = store
        self._rows: dict[str, dict[str, tuple[tuple, dict]]] = {}  # workflow id -> run id -> (stamp, row)
        self._sorted: dict[str, tuple[tuple, list[dict]]] = {}  # workflow id -> (directory stamp, rows)
        self._saved: dict[str, float] = {}
        self._lock = threading.Lock()
        self._scanning: dict[str, threading.Lock] = {}  # one scan of a directory at a time
        self._background: set[str] = set()  # workflows scanned in a thread right now
        self._pages = 0  # pages being made right now: background scans wait ...
        self._waiters = 0  # ... unless someone waits for a scan
        self._quiet = threading.Condition(self._lock)
        self._newest: dict[str, tuple[tuple, int, tuple]] = {}  # workflow id -> (dir stamp, k, result)

    # -------------------------------------------------------- kept rows
    def _file(self, wid: str) -> Path | None:
        return None if self.store is None else self.store / f"runs-{wid}.json"

    def _load(self, wid: str) -> dict[str, tuple[tuple, dict]]:
        path = self._file(wid)
        if path is None:
            return {}
        try:
            doc = json.loads(path.read_bytes())
            return {rid: ((int(v[0]), int(v[1])), dict(v[2])) for rid, v in doc["rows"].items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return {}  # none yet, or unreadable: read the records

    def _save(self, wid: str, rows: dict[str, tuple[tuple, dict]]) -> None:
        import time

        from swamp.util.atomic import atomic_write

        path = self._file(wid)
        now = time.monotonic()
        if path is None or now - self._saved.get(wid, -1e9) < self.SAVE_EVERY_S:
            return
        self._saved[wid] = now
        doc = {"rows": {rid: [stamp[0], stamp[1], row] for rid, (stamp, row) in rows.items()}}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, json.dumps(doc, separators=(",", ":")))
        except OSError:
            pass  # a cache: the next start reads the records instead

    def rows(self, ds, wid: str, *, background: bool = False) -> list[dict]:
        """Every run of one workflow, newest first (caller holds a read
        session). ``background``: a scan nobody waits for, which steps aside
        while a page reads the newest records (``newest``)."""
        directory = str(ds.local_path(records.run_dir(wid)))
        try:
            dst = os.stat(directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        dstamp = (dst.st_mtime_ns, dst.st_ino, dst.st_size)
        with self._lock:
            scanning = self._scanning.setdefault(wid, threading.Lock())
            if not background:  # someone waits for this: no scan steps aside any more
                self._waiters += 1
                self._quiet.notify_all()
        try:
            with scanning:  # a second caller waits for the first's scan, then reuses it
                return self._scan(ds, wid, directory, dst, dstamp, background)
        finally:
            if not background:
                with self._lock:
                    self._waiters -= 1

    @contextlib.contextmanager
    def busy(self):
        """While a page is being made: background scans step aside (one
        Python thread runs at a time, so a scan beside a page would
        double its time), unless someone waits for a scan."""
        with self._lock:
            self._pages += 1
        try:
            yield
        finally:
            with self._lock:
                self._pages -= 1
                self._quiet.notify_all()

    #: how far a record's file time may trail its run's start (clocks of
    #: peers that disagree a little) before ``newest`` stops looking
    SKEW_NS = 300 * 1_000_000_000

    def newest(self, ds, wid: str, k: int) -> tuple[list[dict], int, bool]:
        """(the ``k`` newest rows, how many runs there are, whether every
        record is indexed), without reading every record the first time.

        Once a scan of the directory has been made in this process this is
        ``rows()`` (a stat per record at most). Before that, the records
        are read newest file first: a record's file is written when its
        run starts and each time it moves on, so its time is never before
        the run's start (bar clocks that disagree, ``SKEW_NS``). Once ``k``
        rows are found and the next file is older than the oldest of them
        started, no older file can hold a newer run. A full scan is started
        in the background meanwhile (at most one per workflow). Records
        whose files were all written at one moment (a fresh pull of a
        shared datastore, a restore) make this read them all, as before."""
        directory = str(ds.local_path(records.run_dir(wid)))
        try:
            dst = os.stat(directory)
        except (FileNotFoundError, NotADirectoryError):
            return [], 0, True
        dstamp = (dst.st_mtime_ns, dst.st_ino, dst.st_size)
        with self._lock:
            done = self._sorted.get(wid)
            scanned = wid in self._rows
        if done is not None and done[0] == dstamp:
            return done[1][:k], len(done[1]), True
        if scanned or self._kept_is_current(wid, dst):
            # a scan from rows kept since no record was added or rewritten:
            # one stat per record, no record read (joins a scan under way)
            rows = self.rows(ds, wid)
            return rows[:k], len(rows), True
        self._scan_in_background(ds, wid)
        with self._lock:
            last = self._newest.get(wid)
        if last is not None and last[0] == dstamp and last[1] >= k:  # the directory has not changed since
            rows, total, complete = last[2]
            return rows[:k], total, complete
        with self.busy():
            found = self._newest_by_file_time(ds, wid, directory, k, dst, dstamp)
        with self._lock:
            self._newest[wid] = (dstamp, k, found)
        return found

    def _kept_is_current(self, wid: str, dst) -> bool:
        """Whether the rows kept under the store were saved after the run
        directory last changed (a record added or rewritten changes it)."""
        path = self._file(wid)
        if path is None:
            return False
        try:
            return os.stat(path).st_mtime_ns >= dst.st_mtime_ns
        except OSError:
            return False

    #: how long one background scan steps aside for pages at most, in all
    #: (pages that never stop must not keep the counts away for ever)
    ASIDE_S = 5.0

    def _step_aside(self, most_s: float) -> float:
        """A background scan waits while a page is made (see ``busy``), for
        at most ``most_s``; returns how long it waited."""
        import time

        t0 = time.monotonic()
        with self._quiet:
            self._quiet.wait_for(lambda: not self._pages or self._waiters, timeout=max(0.0, most_s))
        return time.monotonic() - t0

    def _scan_in_background(self, ds, wid: str) -> None:
        with self._lock:
            if wid in self._background:
                return
            self._background.add(wid)

        def scan() -> None:
            try:
                self.rows(ds, wid, background=True)
            except Exception:  # a cache: a later page scans again
                pass
            finally:
                with self._lock:
                    self._background.discard(wid)

        threading.Thread(target=scan, name=f"dashboard index {wid[:8]}", daemon=True).start()

    def _newest_by_file_time(self, ds, wid: str, directory: str, k: int,
                             dst=None, dstamp: tuple | None = None) -> tuple[list[dict], int, bool]:
        """The ``k`` newest rows, read newest file first. When that read
        every record (the file times told nothing), the index keeps them all
        as a scan would."""
        import heapq
        import time
        from datetime import datetime

        files: list[tuple[int, str, tuple]] = []
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
                    continue
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                files.append((st.st_mtime_ns, name[len(_PREFIX):-len(_SUFFIX)], (st.st_mtime_ns, st.st_size)))
        files.sort(reverse=True)
        top: list[tuple[tuple, dict]] = []  # a heap: the oldest of the newest k first
        floor_ns = None  # when the oldest of them started
        read_all = True
        seen: dict[str, tuple[tuple, dict]] = {}
        for mtime_ns, rid, stamp in files:
            if len(top) >= k and floor_ns is not None and mtime_ns < floor_ns - self.SKEW_NS:
                read_all = False
                break
            row = _read_row(ds, wid, rid)
            if row is None:
                continue
            seen[rid] = (stamp, row)
            key = (row["startedAt"], row["id"] or "")
            if len(top) < k:
                heapq.heappush(top, (key, row))
            elif key > top[0][0]:
                heapq.heapreplace(top, (key, row))
            else:
                continue
            if len(top) >= k:
                try:
                    floor_ns = int(datetime.fromisoformat(top[0][1]["startedAt"]).timestamp() * 1e9)
                except (TypeError, ValueError):
                    floor_ns = None  # no usable start time: keep reading
        out = [row for _, row in sorted(top, key=lambda t: t[0], reverse=True)]
        if not read_all or dst is None:
            return out, len(files), False
        every = [row for _, row in seen.values()]
        every.sort(key=lambda r: (r["startedAt"], r["id"]), reverse=True)
        with self._lock:  # what a scan would have kept
            if wid not in self._rows:
                self._rows[wid] = seen
                if time.time_ns() - dst.st_mtime_ns > self.RACY_NS:
                    self._sorted[wid] = (dstamp, every)
        return every[:k], len(every), True

    def _scan(self, ds, wid: str, directory: str, dst, dstamp: tuple, background: bool = False) -> list[dict]:
        import time

        with self._lock:
            done = self._sorted.get(wid)
            if done is not None and done[0] == dstamp:
                return done[1]
            known = self._rows.get(wid)
        if known is None:
            known = self._load(wid)
        read = 0
        aside = 0.0
        settled = time.time_ns() - dst.st_mtime_ns > self.RACY_NS
        fresh: dict[str, tuple[tuple, dict]] = {}
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
                    continue
                rid = name[len(_PREFIX):-len(_SUFFIX)]
                if background and self._pages and not self._waiters and aside < self.ASIDE_S:
                    aside += self._step_aside(self.ASIDE_S - aside)
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                stamp = (st.st_mtime_ns, st.st_size)
                cached = known.get(rid)
                if cached is not None and cached[0] == stamp:
                    fresh[rid] = cached
                    continue
                row = _read_row(ds, wid, rid)
                if row is None:
                    continue
                fresh[rid] = (stamp, row)
                read += 1
        out = [row for _, row in fresh.values()]
        out.sort(key=lambda r: (r["startedAt"], r["id"]), reverse=True)
        with self._lock:
            self._rows[wid] = fresh
            if settled:
                self._sorted[wid] = (dstamp, out)
            else:
                self._sorted.pop(wid, None)
        if read or len(fresh) != len(known):
            self._save(wid, fresh)
        return out

