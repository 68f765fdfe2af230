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

import contextlib
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
            "waiting": sum(s.get("status") in ("waiting_approval", "waiting_signal") for s in steps),
            "initiatedBy": doc.get("initiatedBy")}


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
    """What suspended runs wait for (as ``workflow approvals`` and
    ``workflow signals`` list it), reading only the suspended and running
    runs' records: each row's ``kind`` is ``approval`` or ``signal``; a
    signal wait has its ``state`` (waiting, or settled and about to go on),
    ``timeoutSeconds`` and ``deadline``."""
    from swamp.workflows import signals

    ds = repo.datastore
    out = []
    with reading(repo):
        for wid in ds.listdir(records.RUNS):
            for row in index.rows(ds, wid):
                if row["status"] not in ("suspended", "running") or row["parentRunId"]:
                    continue
                try:
                    run = records.load(ds, wid, row["id"])
                except NotFoundError:
                    continue
                if run.status == "suspended":
                    for owner, j, s in runs.waiting_steps(ds, run):
                        out.append({"kind": "approval", "workflowName": run.workflowName, "runId": run.id,
                                    "job": j.name, "step": s.name, "prompt": s.approval.prompt,
                                    "requestedAt": s.approval.requestedAt,
                                    **({"nestedRunId": owner.id} if owner.id != run.id else {})})
                for owner, j, s in signals.waiting(ds, run):
                    w = s.signal
                    outcome = signals.read_outcome(ds, owner.workflowId, owner.id, j.name, s.name, w.requestedAt)
                    state = ("waiting" if outcome is None and not signals.expired(w)
                             else "timed out" if outcome is None else outcome["outcome"].replace("_", " "))
                    out.append({"kind": "signal", "workflowName": run.workflowName, "runId": run.id,
                                "job": j.name, "step": s.name, "prompt": w.prompt, "requestedAt": w.requestedAt,
                                "timeoutSeconds": w.timeoutSeconds, "deadline": signals.deadline_iso(w),
                                "state": state, **({"settledBy": outcome.get("by")} if outcome else {}),
                                **({"nestedRunId": owner.id} if owner.id != run.id else {})})
    return sorted(out, key=lambda a: (a["requestedAt"] or "", a["runId"], a["job"], a["step"]))


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


# ------------------------------------------------------------ run inputs
#: how a declared input is typed in a form: "text", "integer", "number",
#: "boolean" (a choice of true or false), "choice" (its enum), "json"
#: (arrays, objects, and inputs of no one simple type)
def _field_kind(prop: dict) -> str:
    if "enum" in prop:
        return "choice"
    want = prop.get("type")
    if want in ("string", "integer", "number", "boolean"):
        return "text" if want == "string" else want
    return "json"


def input_form(repo, name: str) -> dict:
    """The fields of a form that starts a run of ``name``, one per declared
    input (``inputs.properties``), in the order the file declares them:
    ``{"fields": [{name, kind, required, default, description, choices,
    min, max, minLength, maxLength, pattern}], "more": bool}`` (``more``:
    the workflow takes inputs it does not declare, typed as JSON)."""
    _, wf = find_workflow(repo, name)
    schema = wf.inputs or {}
    required = set(schema.get("required") or [])
    fields = []
    for key, prop in (schema.get("properties") or {}).items():
        kind = _field_kind(prop)
        field = {"name": key, "kind": kind, "required": key in required, "description": prop.get("description"),
                 "type": prop.get("type")}
        if "default" in prop:
            field["default"] = _as_text(prop["default"], kind)
        if kind == "choice":
            field["choices"] = [{"value": json.dumps(v), "label": v if isinstance(v, str) else json.dumps(v)}
                                for v in prop["enum"]]
            if "default" in prop:
                field["default"] = json.dumps(prop["default"])
        for k in ("minimum", "maximum", "minLength", "maxLength", "pattern"):
            if k in prop:
                field[k] = prop[k]
        fields.append(field)
    return {"fields": fields, "more": bool(wf.inputs is not None and schema.get("additionalProperties"))}


def _as_text(value, kind: str) -> str:
    if kind == "json" or not isinstance(value, (str, int, float, bool)):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def inputs_from_form(repo, name: str, form: dict[str, str]) -> tuple[dict, dict[str, str]]:
    """The inputs a run form sends (``in.NAME`` fields, and ``more``: a
    JSON object of undeclared ones), checked as a run checks them:
    (inputs, problems by field name; ``""`` for the form as a whole). An
    empty field is an input not given (its default applies)."""
    from swamp.models.inputs import CliString, validate_inputs
    from swamp.workflows.engine import validate_workflow_inputs

    _, wf = find_workflow(repo, name)
    schema = wf.inputs or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    inputs: dict = {}
    problems: dict[str, str] = {}
    for key, prop in props.items():
        text = form.get(f"in.{key}", "")
        if text.strip() == "":
            if key in required and "default" not in prop:
                problems[key] = "required"
            continue
        kind = _field_kind(prop)
        if kind in ("json", "choice"):
            try:
                value = json.loads(text)
            except ValueError as e:
                problems[key] = f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
                continue
        else:
            value = CliString(text.strip() if kind != "text" else text)
        try:
            inputs.update(validate_inputs({"properties": {key: prop}}, {key: value}))
        except SwampError as e:
            problems[key] = e.message.split(f"{key}: ", 1)[-1]
    more = (form.get("more") or "").strip()
    if more:
        try:
            extra = json.loads(more)
        except ValueError as e:
            extra = None
            problems["more"] = f"not valid JSON: {e.msg}"
        if extra is not None and not isinstance(extra, dict):
            problems["more"] = "a JSON object of input names and values"
        elif extra:
            clash = sorted(set(extra) & set(props))
            if clash:
                problems["more"] = f"{', '.join(clash)} has a field of its own above"
            else:
                inputs.update(extra)
    unknown = sorted(k[3:] for k in form if k.startswith("in.") and k[3:] not in props)
    if unknown:
        problems[""] = f"{name} declares no input {', '.join(unknown)}"
    if not problems:
        try:  # the run's own check, the one that decides
            inputs = validate_workflow_inputs(wf, inputs)
        except SwampError as e:
            problems[""] = e.message
    return inputs, problems


# ---------------------------------------------------------------- the graph
#: sizes in the drawing (px): a step, the gaps between steps and between jobs
_STEP_W, _STEP_H, _GAP_X, _GAP_Y, _PAD, _HEAD, _JOB_GAP_X, _JOB_GAP_Y = 190, 34, 34, 10, 12, 26, 56, 22


def run_statuses(doc: dict) -> dict[tuple[str, str], str]:
    """The status of each declared step of a run record (as commands print
    it): a forEach step's is its items' together (failed over running over
    waiting over pending over skipped over succeeded)."""
    order = ("failed", "running", "waiting_approval", "waiting_signal", "pending", "cancelled", "skipped",
             "succeeded")
    found: dict[tuple[str, str], set[str]] = {}
    for job in doc.get("jobs") or []:
        for s in job.get("steps") or []:
            name = s.get("forEachOf") or s.get("name")
            found.setdefault((job["name"], name), set()).add(s.get("status") or "pending")
    return {key: next((o for o in order if o in got), sorted(got)[0]) for key, got in found.items()}


def workflow_graph(repo, name: str, statuses: dict[tuple[str, str], str] | None = None) -> dict | None:
    """A drawing of a workflow's jobs and steps and what each depends on,
    laid out left to right in the order they run: each job a box with its
    steps in columns by level, an arrow for each dependency (dashed when
    its condition is not plain ``succeeded``). With ``statuses`` (of a run)
    each step carries its status. Sizes and positions in px, for an SVG;
    None when the workflow file cannot be read."""
    from swamp.workflows import dag

    try:
        _, wf = find_workflow(repo, name)
        job_levels = dag.job_levels(wf)
    except (SwampError, ValueError):
        return None
    statuses = statuses or {}
    jobs = {j.name: j for j in wf.jobs}
    boxes: dict[str, dict] = {}
    steps_out: list[dict] = []
    edges: list[dict] = []
    x = _PAD
    height = 0
    for level in job_levels:
        y = _PAD
        level_w = 0
        for jname in level:
            job = jobs[jname]
            try:
                columns = dag.step_levels(job)
            except ValueError:
                columns = [[s.name for s in job.steps]]
            w = 2 * _PAD + len(columns) * _STEP_W + (len(columns) - 1) * _GAP_X
            rows = max(len(c) for c in columns)
            h = _HEAD + _PAD + rows * _STEP_H + (rows - 1) * _GAP_Y
            box = {"name": jname, "x": x, "y": y, "w": w, "h": h, "steps": {}}
            declared = {s.name: s for s in job.steps}
            for ci, column in enumerate(columns):
                for ri, sname in enumerate(column):
                    step = declared[sname]
                    node = {"job": jname, "name": sname, "task": step.task.type, "forEach": step.forEach is not None,
                            "x": x + _PAD + ci * (_STEP_W + _GAP_X), "y": y + _HEAD + ri * (_STEP_H + _GAP_Y),
                            "w": _STEP_W, "h": _STEP_H, "status": statuses.get((jname, sname))}
                    box["steps"][sname] = node
                    steps_out.append(node)
            for step in job.steps:
                for d in step.dependsOn:
                    if d.step in box["steps"]:
                        edges.append(_edge(box["steps"][d.step], box["steps"][step.name], d.condition.type))
            boxes[jname] = box
            y += h + _JOB_GAP_Y
            level_w = max(level_w, w)
        height = max(height, y - _JOB_GAP_Y + _PAD)
        x += level_w + _JOB_GAP_X
    for job in wf.jobs:
        for d in job.dependsOn:
            if d.job in boxes:
                edges.append(_edge(boxes[d.job], boxes[job.name], d.condition.type, job=True))
    job_rows = [{k: v for k, v in b.items() if k != "steps"} | {"status": _job_status(b, statuses)}
                for b in boxes.values()]
    return {"width": x - _JOB_GAP_X + _PAD, "height": height, "jobs": job_rows, "steps": steps_out,
            "edges": edges, "run": bool(statuses)}


def _job_status(box: dict, statuses: dict) -> str | None:
    got = {statuses.get((box["name"], s)) for s in box["steps"]} - {None}
    if not got:
        return None
    for s in ("failed", "running", "waiting_approval", "waiting_signal", "pending", "cancelled"):
        if s in got:
            return s
    return "succeeded" if "succeeded" in got else sorted(got)[0]


def _edge(a: dict, b: dict, condition: str, *, job: bool = False) -> dict:
    x1, y1 = a["x"] + a["w"], a["y"] + (a["h"] / 2 if not job else _HEAD / 2 + 2)
    x2, y2 = b["x"], b["y"] + (b["h"] / 2 if not job else _HEAD / 2 + 2)
    bend = max(16.0, (x2 - x1) / 2)
    return {"d": f"M{x1:.0f},{y1:.0f} C{x1 + bend:.0f},{y1:.0f} {x2 - bend:.0f},{y2:.0f} {x2 - 6:.0f},{y2:.0f}",
            "condition": condition, "job": job, "from": a.get("name"), "to": b.get("name")}
