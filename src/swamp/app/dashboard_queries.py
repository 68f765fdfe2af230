"""Read use cases the dashboard needs and the other front ends do not: a
page of a workflow's runs out of thousands (through a
``workflows.run_index.RunIndex``), the approvals waiting, the versions of
a piece of data side by side, and the datastore at a glance."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from swamp.app import data, datastore as datastores
from swamp.app.datastore_conflicts import list_conflicts
from swamp.app.lifecycle import reading
from swamp.app.workflow_files import run_json, search
from swamp.data.records import record_json
from swamp.data.repository import DataRepository
from swamp.errors import NotFoundError, SwampError
from swamp.models.definition_lookup import find_ref
from swamp.models.inputs import CliString, validate_inputs
from swamp.workflows import dag, records, runs, signals
from swamp.workflows.engine import validate_workflow_inputs
from swamp.workflows.files import find_workflow
from swamp.workflows.run_index import RunIndex
from swamp.workflows.schema import workflow_id

if TYPE_CHECKING:
    from swamp.repo.context import Repo


@dataclass
class RunPage:
    rows: list[dict]
    total: int
    offset: int
    limit: int
    #: runs per status over every run of the workflow (None while the
    #: runs are still being indexed after a first start)
    counts: dict[str, int] | None


def preload() -> None:
    """Import what the pages' reads use, so the first page does not pay for
    it (the server calls this before it takes requests)."""
    from swamp.workflows import dag, engine  # noqa: F401


def warm(repo: Repo, index: RunIndex) -> None:
    """Read every run once into ``index`` (at the dashboard's start, in a thread)."""
    ds = repo.datastore
    with reading(repo):
        wids = ds.listdir(records.RUNS)
    for wid in wids:
        index.rows(ds, wid, background=True)


def workflow_runs(repo: Repo, index: RunIndex, name: str, *, offset: int = 0, limit: int = 50,
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


def workflows_overview(repo: Repo, index: RunIndex) -> list[dict]:
    """Each workflow with its number of runs and its newest run."""
    out = []
    with reading(repo):
        for wf in search(repo, None):
            if "error" in wf:
                out.append({**wf, "runs": 0, "latest": None})
                continue
            rows, total, _ = index.newest(repo.datastore, wf["id"], 1)
            out.append({**wf, "runs": total, "latest": rows[0] if rows else None})
    return out


def approvals(repo: Repo, index: RunIndex) -> list[dict]:
    """What suspended runs wait for (as ``workflow approvals`` and
    ``workflow signals`` list it), reading only the suspended and running
    runs' records: each row's ``kind`` is ``approval`` or ``signal``; a
    signal wait has its ``state`` (waiting, or settled and about to go on),
    ``timeoutSeconds`` and ``deadline``."""
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


def run_state(repo: Repo, name: str, run_id: str) -> tuple[dict, str]:
    """A run record as commands print it, and its log, read in one session."""
    _, wf = find_workflow(repo, name)
    ds = repo.datastore
    with reading(repo):
        run = records.load(ds, workflow_id(wf), run_id)
        return run_json(repo, run), records.read_log(ds, run.workflowId, run.id)


def data_version_text(repo: Repo, model: str, name: str, version: int | None) -> dict:
    """One version with its content as the dashboard shows it: JSON
    pretty-printed, text as it is, binary not at all (offered as a
    download). ``text`` is what a diff compares."""
    doc = data.get(repo, model, name, version, content=True)
    content = doc.pop("content", None)
    if doc.get("binary"):
        text = None
    elif isinstance(content, (dict, list, int, float, bool)) or content is None:
        text = json.dumps(content, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    else:
        text = content
    return {**doc, "text": text}


def data_version_bytes(repo: Repo, model: str, name: str, version: int | None) -> tuple[dict, bytes]:
    """The stored bytes of one version, for a download."""
    d = find_ref(repo, model)  # remembered while models/ is unchanged, as every data read
    data = DataRepository(repo.datastore)
    with reading(repo):
        rec = data.get(d.type, d.id, name, version)
        raw = data.content(rec)
    return record_json(rec, None), raw


def data_diff(repo: Repo, model: str, name: str, old: int, new: int) -> dict:
    """A unified diff between two versions' contents (as shown)."""
    import difflib

    a = data_version_text(repo, model, name, old)
    b = data_version_text(repo, model, name, new)
    if a["text"] is None or b["text"] is None:
        return {"old": a, "new": b, "lines": None, "same": a["sha256"] == b["sha256"]}
    lines = list(difflib.unified_diff(a["text"].splitlines(), b["text"].splitlines(),
                                      f"version {old}", f"version {new}", lineterm=""))
    return {"old": a, "new": b, "lines": lines, "same": not lines}


def datastore_overview(repo: Repo, *, commits: int = 20) -> dict:
    """The datastore at a glance: its status, its recent commits (shared
    datastores only), the leases held, and conflict copies to resolve."""
    out: dict = {"status": datastores.status(repo), "commits": None, "leases": [], "conflicts": None}
    try:
        out["leases"] = datastores.lock_status(repo)
    except SwampError as e:
        out["leasesError"] = e.message
    if repo.datastore.kind != "filesystem":  # only a sync makes commits or conflict copies

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


def input_form(repo: Repo, name: str) -> dict:
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


def inputs_from_form(repo: Repo, name: str, form: dict[str, str]) -> tuple[dict, dict[str, str]]:
    """The inputs a run form sends (``in.NAME`` fields, and ``more``: a
    JSON object of undeclared ones), checked as a run checks them:
    (inputs, problems by field name; ``""`` for the form as a whole). An
    empty field is an input not given (its default applies)."""
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


def step_labels(doc: dict) -> dict[tuple[str, str], dict]:
    """What the graph writes on each declared step of a run record, by
    (job, declared name): a forEach step's rendered item names
    (``deploy-eu, deploy-us``, not ``deploy-${{ self.region }}``) and the
    workers that ran the step (or its items)."""
    out: dict[tuple[str, str], dict] = {}
    for job in doc.get("jobs") or []:
        for s in job.get("steps") or []:
            key = (job["name"], s.get("forEachOf") or s.get("name"))
            got = out.setdefault(key, {"items": [], "workers": []})
            if s.get("forEachOf"):
                got["items"].append(s["name"])
            if s.get("worker") and s["worker"] not in got["workers"]:
                got["workers"].append(s["worker"])
    return {k: {"label": ", ".join(v["items"]) if v["items"] else None, "workers": sorted(v["workers"])}
            for k, v in out.items()}


def _unrendered_label(name: str) -> str:
    """A step name as the definition graph shows it before a run: each
    ``${{ self.X }}`` as ``{X}`` (the item it will be), any other
    expression as ``…``."""
    import re

    name = re.sub(r"\$\{\{\s*self\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", r"{\1}", name)
    return re.sub(r"\$\{\{.*?\}\}", "…", name)


def workflow_graph(repo: Repo, name: str, statuses: dict[tuple[str, str], str] | None = None,
                   labels: dict[tuple[str, str], dict] | None = None) -> dict | None:
    """A drawing of a workflow's jobs and steps and what each depends on,
    laid out left to right in the order they run: each job a box with its
    steps in columns by level, an arrow for each dependency (dashed when
    its condition is not plain ``succeeded``). With ``statuses`` (of a run)
    each step carries its status, with ``labels`` (``step_labels``) its
    rendered item names and its workers. Sizes and positions in px, for an SVG;
    None when the workflow file cannot be read."""
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
                    shown = (labels or {}).get((jname, sname)) or {}
                    node["label"] = shown.get("label") or _unrendered_label(sname)
                    node["workers"] = shown.get("workers") or []
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
