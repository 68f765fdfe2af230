"""Read use cases the dashboard needs and the other front ends do not: a
page of a workflow's runs out of thousands, the approvals waiting, the
versions of a piece of data side by side, and the datastore at a glance.

Run ids are random, so the newest runs can only be found by looking at
every record. ``RunIndex`` keeps a summary row per record, keyed by the
record file's size and modification time: a page then costs one listing
and one stat per run, and reads only the records that changed since the
last page. A first page before anything is indexed reads only the
newest records (by file time: a record is written when its run starts and
after, never before), while ``warm`` reads every record in the background."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from swamp.app.lifecycle import reading
from swamp.errors import NotFoundError, SwampError
from swamp.workflows import records, runs
from swamp.workflows.files import find_workflow
from swamp.workflows.schema import workflow_id

_PREFIX, _SUFFIX = "workflow-run-", ".yaml"


@dataclass
class RunPage:
    rows: list[dict]
    total: int
    offset: int
    limit: int
    #: runs per status over every run of the workflow (None while the
    #: runs are still being indexed after a first start)
    counts: dict[str, int] | None


def _summary(doc: dict) -> dict:
    steps = [s for j in doc.get("jobs") or [] for s in j.get("steps") or []]
    return {"id": doc.get("id"), "workflowName": doc.get("workflowName"), "status": doc.get("status"),
            "startedAt": doc.get("startedAt") or "", "completedAt": doc.get("completedAt"),
            "durationMs": doc.get("durationMs"), "parentRunId": doc.get("parentRunId"),
            "steps": len(steps), "failedSteps": sum(s.get("status") == "failed" for s in steps),
            "waiting": sum(s.get("status") in ("waiting_approval", "waiting_signal") for s in steps)}


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
        self._pages = 0  # pages reading the newest records right now: background scans wait
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
        with scanning:  # a second caller waits for the first's scan, then reuses it
            return self._scan(ds, wid, directory, dst, dstamp, background)

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
        if scanned:
            rows = self.rows(ds, wid)
            return rows[:k], len(rows), True
        self._scan_in_background(ds, wid)
        with self._lock:
            last = self._newest.get(wid)
        if last is not None and last[0] == dstamp and last[1] >= k:  # the directory has not changed since
            rows, total, complete = last[2]
            return rows[:k], total, complete
        with self._lock:
            self._pages += 1
        try:
            found = self._newest_by_file_time(ds, wid, directory, k, dst, dstamp)
        finally:
            with self._lock:
                self._pages -= 1
                self._quiet.notify_all()
        with self._lock:
            self._newest[wid] = (dstamp, k, found)
        return found

    def _step_aside(self, most_s: float = 2.0) -> None:
        """A background scan waits while a page reads (one Python thread
        runs at a time: a scan running beside the page would double its
        time), for at most ``most_s``."""
        with self._quiet:
            self._quiet.wait_for(lambda: not self._pages, timeout=most_s)

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
            row = self._read_row(ds, wid, rid)
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

    @staticmethod
    def _read_row(ds, wid: str, rid: str) -> dict | None:
        try:
            doc = json.loads(ds.read_bytes(records.record_path(wid, rid)))
        except (NotFoundError, ValueError):
            # hand-edited YAML, or gone meanwhile: the slow, exact way
            try:
                doc = records.load(ds, wid, rid).to_json()
            except SwampError:
                return None
        return _summary(doc)

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
        settled = time.time_ns() - dst.st_mtime_ns > self.RACY_NS
        fresh: dict[str, tuple[tuple, dict]] = {}
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
                    continue
                rid = name[len(_PREFIX):-len(_SUFFIX)]
                if background and self._pages:
                    self._step_aside()
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                stamp = (st.st_mtime_ns, st.st_size)
                cached = known.get(rid)
                if cached is not None and cached[0] == stamp:
                    fresh[rid] = cached
                    continue
                row = self._read_row(ds, wid, rid)
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

    def warm(self, repo) -> None:
        """Read every run once (at the dashboard's start, in a thread)."""
        ds = repo.datastore
        with reading(repo):
            wids = ds.listdir(records.RUNS)
        for wid in wids:
            self.rows(ds, wid, background=True)


def workflow_runs(repo, index: RunIndex, name: str, *, offset: int = 0, limit: int = 50,
                  status: str | None = None) -> RunPage:
    """One page of a workflow's runs, newest first (top-level and nested)."""
    _, wf = find_workflow(repo, name)
    if not status:
        with reading(repo):
            rows, total, complete = index.newest(repo.datastore, workflow_id(wf), offset + limit)
        if not complete:  # the runs are still being indexed: no counts yet
            return RunPage(rows[offset:offset + limit], total, offset, limit, None)
    with reading(repo):
        rows = index.rows(repo.datastore, workflow_id(wf))
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    if status:
        rows = [r for r in rows if r["status"] == status]
    return RunPage(rows[offset:offset + limit], len(rows), offset, limit, counts)


def workflows_overview(repo, index: RunIndex) -> list[dict]:
    """Each workflow with its number of runs and its newest run."""
    from swamp.workflows.service import search

    out = []
    with reading(repo):
        for wf in search(repo, None):
            if "error" in wf:
                out.append({**wf, "runs": 0, "latest": None})
                continue
            rows, total, _ = index.newest(repo.datastore, wf["id"], 1)
            out.append({**wf, "runs": total, "latest": rows[0] if rows else None})
    return out


def approvals(repo, index: RunIndex) -> list[dict]:
    """What suspended runs wait for (as ``workflow approvals`` lists it),
    reading only the suspended runs' records."""
    ds = repo.datastore
    out = []
    with reading(repo):
        for wid in ds.listdir(records.RUNS):
            for row in index.rows(ds, wid):
                if row["status"] != "suspended" or row["parentRunId"]:
                    continue
                try:
                    run = records.load(ds, wid, row["id"])
                except NotFoundError:
                    continue
                for owner, j, s in runs.waiting_steps(ds, run):
                    out.append({"workflowName": run.workflowName, "runId": run.id, "job": j.name,
                                "step": s.name, "prompt": s.approval.prompt,
                                "requestedAt": s.approval.requestedAt,
                                **({"nestedRunId": owner.id} if owner.id != run.id else {})})
    return sorted(out, key=lambda a: (a["requestedAt"], a["runId"], a["job"], a["step"]))


def run_state(repo, name: str, run_id: str) -> tuple[dict, str]:
    """A run record as commands print it, and its log, read in one session."""
    from swamp.workflows.service import run_json

    _, wf = find_workflow(repo, name)
    ds = repo.datastore
    with reading(repo):
        run = records.load(ds, workflow_id(wf), run_id)
        return run_json(repo, run), records.read_log(ds, run.workflowId, run.id)


def data_version_text(repo, model: str, name: str, version: int | None) -> dict:
    """One version with its content as the dashboard shows it: JSON
    pretty-printed, text as it is, binary not at all (offered as a
    download). ``text`` is what a diff compares."""
    from swamp.app import data

    doc = data.get(repo, model, name, version, content=True)
    content = doc.pop("content", None)
    if doc.get("binary"):
        text = None
    elif isinstance(content, (dict, list, int, float, bool)) or content is None:
        text = json.dumps(content, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    else:
        text = content
    return {**doc, "text": text}


def data_version_bytes(repo, model: str, name: str, version: int | None) -> tuple[dict, bytes]:
    """The stored bytes of one version, for a download."""
    from swamp.data.records import record_json
    from swamp.data.repository import DataRepository
    from swamp.models.definition_files import find

    d = find(repo, model)[1]
    data = DataRepository(repo.datastore)
    with reading(repo):
        rec = data.get(d.type, d.id, name, version)
        raw = data.content(rec)
    return record_json(rec, None), raw


def data_diff(repo, model: str, name: str, old: int, new: int) -> dict:
    """A unified diff between two versions' contents (as shown)."""
    import difflib

    a = data_version_text(repo, model, name, old)
    b = data_version_text(repo, model, name, new)
    if a["text"] is None or b["text"] is None:
        return {"old": a, "new": b, "lines": None, "same": a["sha256"] == b["sha256"]}
    lines = list(difflib.unified_diff(a["text"].splitlines(), b["text"].splitlines(),
                                      f"version {old}", f"version {new}", lineterm=""))
    return {"old": a, "new": b, "lines": lines, "same": not lines}


def datastore_overview(repo, *, commits: int = 20) -> dict:
    """The datastore at a glance: its status, its recent commits (shared
    datastores only), the leases held, and conflict copies to resolve."""
    from swamp.app import datastore as datastores

    out: dict = {"status": datastores.status(repo), "commits": None, "leases": [], "conflicts": None}
    try:
        out["leases"] = datastores.lock_status(repo)
    except SwampError as e:
        out["leasesError"] = e.message
    if repo.datastore.kind != "filesystem":  # only a sync makes commits or conflict copies
        from swamp.app.datastore_conflicts import list_conflicts

        try:
            out["commits"] = datastores.history(repo, commits)
        except SwampError as e:
            out["commitsError"] = e.message
        try:
            out["conflicts"] = list_conflicts(repo)
        except SwampError as e:
            out["conflictsError"] = e.message
    return out
