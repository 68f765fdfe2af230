"""What each dashboard page reads and shows, and what each form does.

Plain functions of a ``Ctx``, run in a worker thread; a page returns a
``Page`` (template and values), a form a redirect. Access control is the
API's: the same action on the same resource."""

from __future__ import annotations

import json

from starlette.responses import RedirectResponse, Response

from swamp.errors import ValidationError
from swamp.util import actors
from swamp.serve.dashboard.context import FINISHED, PAGE_SIZE, Ctx, Page

STATUSES = ("running", "suspended", "pending", "succeeded", "failed", "cancelled", "interrupted")


def _index(c: Ctx):
    return c.dash.index


# ---------------------------------------------------------------- workflows
def workflows(c: Ctx) -> Page:
    from swamp.app.dashboard_queries import workflows_overview

    from swamp.app.trigger_list import trigger_rows

    scheduled = {t["workflow"]: t for t in trigger_rows(c.repo)}  # the schedule column (app/trigger_list.py)
    rows = [{**w, "trigger": scheduled.get(w["name"])} for w in workflows_overview(c.repo, _index(c))
            if c.allowed("read", f"workflow:{w['name']}")]
    return Page("workflows.html", {"title": "Workflows", "nav": "workflows", "workflows": rows})


def runs(c: Ctx, *, problems: dict | None = None, values: dict | None = None) -> Page:
    """A workflow's runs, its graph, and the form that starts a run
    (``problems`` and ``values``: a form sent back with what is wrong)."""
    from swamp.app.dashboard_queries import input_form, workflow_graph, workflow_runs

    name = c.path["workflow"]
    c.require("read", f"workflow:{name}")
    status = c.query.get("status") or None
    if status is not None and status not in STATUSES:
        raise ValidationError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    page_no = max(1, c.int_query("page", 1))
    found = workflow_runs(c.repo, _index(c), name, offset=(page_no - 1) * PAGE_SIZE, limit=PAGE_SIZE,
                          status=status)
    pages = max(1, -(-found.total // PAGE_SIZE))
    return Page("runs.html", {"title": name, "nav": "workflows", "workflow": name, "rows": found.rows,
                              "total": found.total, "counts": found.counts, "page": page_no, "pages": pages,
                              "status": status or "", "statuses": STATUSES,
                              "can_run": c.allowed("run", f"workflow:{name}"),
                              "form": input_form(c.repo, name), "problems": problems or {},
                              "values": values or {}, "graph": workflow_graph(c.repo, name)})


def _groups(steps: list[dict]) -> list[dict]:
    """Steps in order, the items of one forEach step gathered in a group."""
    out: list[dict] = []
    for s in steps:
        of = s.get("forEachOf")
        if of and out and out[-1]["kind"] == "group" and out[-1]["name"] == of:
            out[-1]["steps"].append(s)
        elif of:
            out.append({"kind": "group", "name": of, "steps": [s]})
        else:
            out.append({"kind": "step", "step": s})
    for g in out:
        if g["kind"] == "group":
            counts: dict[str, int] = {}
            for s in g["steps"]:
                counts[s.get("status", "pending")] = counts.get(s.get("status", "pending"), 0) + 1
            g["counts"] = sorted(counts.items())
            g["status"] = ("failed" if "failed" in counts else "running" if "running" in counts
                           else "waiting_approval" if "waiting_approval" in counts
                           else "pending" if "pending" in counts else "succeeded")
    return out


def run(c: Ctx, *, signal_problem: dict | None = None) -> Page:
    """A run's page; ``signal_problem`` ({step, error, hint, message}): a
    signal form sent back with its error in place and what was typed."""
    from swamp.app.dashboard_queries import run_state, run_statuses, step_labels, workflow_graph

    name, run_id = c.path["workflow"], c.path["run"]
    c.require("read", f"workflow:{name}")
    doc, log = run_state(c.repo, name, run_id)
    total = doc.get("durationMs") or max([s.get("durationMs") or 0 for j in doc.get("jobs", [])
                                          for s in j.get("steps", [])] or [0]) or 1
    jobs = [{**j, "groups": _groups(j.get("steps", []))} for j in doc.get("jobs", [])]
    waiting = [a for a in doc.get("approvalRequired", [])]
    signal_waits = [w for w in doc.get("signalRequired", [])]
    return Page("run.html", {"title": f"{name} run {run_id[:8]}", "nav": "workflows", "workflow": name,
                             "run": doc, "jobs": jobs, "log": log, "total": total, "waiting": waiting,
                             "signal_waits": signal_waits,
                             "live": doc["status"] not in FINISHED,
                             "graph": workflow_graph(c.repo, name, run_statuses(doc), step_labels(doc)),
                             "signal_problem": signal_problem or {},
                             "can_approve": c.allowed("approve", f"workflow:{name}"),
                             "can_resume": c.allowed("run", f"workflow:{name}") and doc["status"] == "suspended"
                             and not waiting and not signal_waits,
                             "can_cancel": c.allowed("run", f"workflow:{name}")
                             and doc["status"] in ("running", "suspended", "pending"),
                             "can_rerun": c.allowed("run", f"workflow:{name}") and _rerunnable(doc)})


def _rerunnable(doc: dict) -> bool:
    """Whether the run page offers "Re-run from failure"."""
    from swamp.app.workflow_files import can_rerun

    return can_rerun(doc)


def _route(op: str):
    from swamp.serve.routes import ROUTES

    return next(r for r in ROUTES if r.op == op)


def _api(c: Ctx, op: str, path: dict, body: dict):
    """Run the API route ``op``'s own handler, after its own access check."""
    from swamp.serve import vault_grants
    from swamp.serve.calls import Call, Reply

    route = _route(op)
    call = Call(c.repo, path, {}, body,
                authorize=lambda action, resource: c.require(action, resource),
                caller=actors.of_subjects(c.subjects))
    call.resume_later = lambda name, run_id: resume_in_background(c, name, run_id)
    c.require(route.action, route.resource(call))
    key = c.dash.state.begin()
    try:
        with vault_grants.acting_for(c.dash.state, c.subjects, op):
            result = route.run(call)
    finally:
        c.dash.state.end(key)
    return result.doc if isinstance(result, Reply) else result


def _back(c: Ctx) -> Response:
    name, run_id = c.path["workflow"], c.path["run"]
    return RedirectResponse(f"/ui/workflows/{name}/runs/{run_id}", 303)


def decide(decision: str):
    def handler(c: Ctx) -> Response:
        step = (c.form.get("step") or "").strip()
        if not step:
            raise ValidationError("say which step to decide on")
        body = {"step": step, "runId": c.path["run"]}
        if (c.form.get("reason") or "").strip():
            body["reason"] = c.form["reason"].strip()
        # the API's handler continues the run once nothing else waits (workflow_routes._continue_decided)
        _api(c, "approveStep" if decision == "approved" else "rejectStep", {"workflow": c.path["workflow"]}, body)
        return _back(c)

    return handler


def resume_in_background(c: Ctx, name: str, run_id: str) -> None:
    """Continue the run on this server, as the caller (serve/state.py)."""
    state = c.dash.state
    if state.shutting_down:
        return
    state.resume_workflow(name, run_id, c.subjects[0], by=actors.of_subjects(c.subjects),
                       subjects=list(c.subjects))


def resume(c: Ctx) -> Response:
    name = c.path["workflow"]
    c.require("run", f"workflow:{name}")
    resume_in_background(c, name, c.path["run"])
    return _back(c)


def signal(c: Ctx) -> Response:
    """Send a message to a step waiting for a signal, through the API's
    own handler (``swamp workflow signal``; ``approve`` on the workflow).
    The server resumes the run by itself once the wait is settled."""
    step = (c.form.get("step") or "").strip()
    if not step:
        raise ValidationError("say which step to signal")
    text = c.form.get("message") or ""
    try:
        _send_signal(c, step, text)
    except ValidationError as e:
        # A message that is not JSON or that the step's schema refuses: the form comes back with
        # the error beside it and the message as typed (no dead-end page). Who may not, a step no
        # longer waiting, the server refusing: their own pages, as before.
        page = run(c, signal_problem={"step": step, "error": e.message, "hint": e.hint or "", "message": text})
        return c.dash.render(c.request, page, c.subjects, 400)
    return _back(c)


def _send_signal(c: Ctx, step: str, text: str) -> None:
    text = text.strip()
    if not text:
        raise ValidationError(f"the message for {step} is empty", hint='type JSON, such as {"version": "1.4.2"} or true')
    try:
        message = json.loads(text)
    except ValueError as e:
        raise ValidationError(f"the message for {step} is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})",
                              hint='type JSON, such as {"version": "1.4.2"}, "text" or true') from None
    _api(c, "signalStep", {"workflow": c.path["workflow"]}, {"step": step, "message": message,
                                                              "runId": c.path["run"]})


def cancel(c: Ctx) -> Response:
    _api(c, "cancelWorkflow", {"workflow": c.path["workflow"]}, {"runId": c.path["run"]})
    return _back(c)


def rerun(c: Ctx) -> Response:
    """Re-run a failed run from its failure, as ``workflow run --from-failed``
    (``run`` on the workflow): the new run's page once it moves."""
    name, old = c.path["workflow"], c.path["run"]
    c.require("run", f"workflow:{name}")
    if c.dash.state.shutting_down:
        from swamp.errors import HttpError

        raise HttpError("shutting_down", "the server is shutting down")
    run_id = start_in_background(c, name, {}, from_failed=old)
    if run_id is None:
        return RedirectResponse(f"/ui/workflows/{name}", 303)
    return RedirectResponse(f"/ui/workflows/{name}/runs/{run_id}", 303)


def start_run(c: Ctx) -> Response:
    """Start a run in the background, with the inputs of the form built
    from the workflow's declared inputs, checked first as the run checks
    them: a problem sends the form back (400) with it next to its field."""
    from swamp.app.dashboard_queries import inputs_from_form

    name = c.path["workflow"]
    c.require("run", f"workflow:{name}")
    inputs, problems = inputs_from_form(c.repo, name, c.form)
    if problems:
        page = runs(c, problems=problems, values=c.form)
        return c.dash.render(c.request, page, c.subjects, 400)
    state = c.dash.state
    if state.shutting_down:
        from swamp.errors import HttpError

        raise HttpError("shutting_down", "the server is shutting down")
    run_id = start_in_background(c, name, inputs)
    if run_id is None:  # still preparing after a few seconds: it shows on the runs page
        return RedirectResponse(f"/ui/workflows/{name}", 303)
    return RedirectResponse(f"/ui/workflows/{name}/runs/{run_id}", 303)


#: how long a run form waits for the run's id before sending the browser
#: to the runs page instead of the run's own
START_WAIT_S = 5.0


def start_in_background(c: Ctx, name: str, inputs: dict, *, from_failed: str | None = None) -> str | None:
    """Run a workflow in a thread of its own (counted in flight, as the
    server's own runs are) and return its run id once its first step
    moves, or None if that takes longer than START_WAIT_S. A run refused
    before it starts is this form's error."""
    import threading

    from swamp.errors import SwampError
    from swamp.serve import vault_grants
    from swamp.serve.calls import Call
    from swamp.serve.workflow_routes import step_observer
    from swamp.serve.wire import _log

    state, who, actor = c.dash.state, c.subjects[0], actors.of_subjects(c.subjects)
    subjects = list(c.subjects)
    state.admit(who)
    key = state.begin()
    got: dict = {}
    ready = threading.Event()

    def note(info: dict) -> None:
        state.note(key, info)
        if info.get("runId") and "runId" not in got:
            got["runId"] = info["runId"]
            ready.set()

    def run() -> None:
        from swamp.app import workflows

        call = Call(state.repo, {"workflow": name}, {}, {})
        call.note = note
        call.note({"kind": "workflow", "workflow": name})
        try:
            with vault_grants.acting_for(state, subjects, "dashboardRun"):  # the run's vault.get() is the caller's
                result = workflows.run(state.repo, name, inputs, observer=step_observer(call, name),
                                       by=actor, from_failed=from_failed)
            _log(f"{who}: run {result.run.id} of {name} {result.run.status} (started from the dashboard)")
        except SwampError as e:
            got.setdefault("error", e)
            _log(f"{who}: {name} did not run: {e.message}")
        except Exception:
            import traceback

            traceback.print_exc()
        finally:
            state.end(key)
            state.release(who)
            ready.set()

    threading.Thread(target=run, name=f"run {name} for {who}").start()
    ready.wait(START_WAIT_S)
    if "runId" not in got and "error" in got:
        raise got["error"]
    return got.get("runId")


def approvals(c: Ctx) -> Page:
    from swamp.app.dashboard_queries import approvals as waiting

    found = [{**a, "can_approve": c.allowed("approve", f"workflow:{a['workflowName']}")}
             for a in waiting(c.repo, _index(c)) if c.allowed("read", f"workflow:{a['workflowName']}")]
    return Page("approvals.html", {"title": "Approvals", "nav": "approvals",
                                   "rows": [a for a in found if a["kind"] == "approval"],
                                   "signals": [a for a in found if a["kind"] == "signal"]})


# --------------------------------------------------------------------- data
def models(c: Ctx) -> Page:
    from swamp.app import data
    from swamp.app.model_definitions import search_models

    found = [m for m in search_models(c.repo, None) if c.allowed("read", f"model:{m['name']}")]
    rows = [r for r in data.list_names(c.repo, None) if c.allowed("read", f"data:{r['model']}/{r['name']}")]
    by_model: dict[str, list] = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
    return Page("models.html", {"title": "Models and data", "nav": "models", "models": found,
                                "data": by_model})


def versions(c: Ctx) -> Page:
    from swamp.app import data

    model, name = c.path["model"], c.path["name"]
    c.require("read", f"data:{model}/{name}")
    rows = list(reversed(data.versions(c.repo, model, name)))
    return Page("versions.html", {"title": f"{model}/{name}", "nav": "models", "model": model, "name": name,
                                  "rows": rows})


def version(c: Ctx):
    from swamp.app.dashboard_queries import data_version_bytes, data_version_text

    model, name = c.path["model"], c.path["name"]
    c.require("read", f"data:{model}/{name}")
    number = _version(c.path["version"])
    if c.query.get("download"):
        from swamp.vault.redact import redact_bytes

        meta, raw = data_version_bytes(c.repo, model, name, number)
        filename = f"{model}-{name}-v{meta['version']}".replace('"', "")
        return Response(redact_bytes(raw), media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"',
                                 "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})
    doc = data_version_text(c.repo, model, name, number)
    return Page("version.html", {"title": f"{model}/{name} v{doc['version']}", "nav": "models", "model": model,
                                 "name": name, "doc": doc})


def _version(text: str | None) -> int | None:
    if text in (None, "", "latest"):
        return None
    try:
        return int(text)
    except ValueError:
        raise ValidationError(f"a version is a number, not {text!r}") from None


def diff(c: Ctx) -> Page:
    from swamp.app import data
    from swamp.app.dashboard_queries import data_diff

    model, name = c.path["model"], c.path["name"]
    c.require("read", f"data:{model}/{name}")
    old, new = c.int_query("old"), c.int_query("new")
    if old is None or new is None:
        numbers = [v["version"] for v in data.versions(c.repo, model, name)]
        if len(numbers) < 2 and (old is None or new is None):
            raise ValidationError(f"{model}/{name} has one version: nothing to compare")
        old = numbers[-2] if old is None else old
        new = numbers[-1] if new is None else new
    found = data_diff(c.repo, model, name, old, new)
    return Page("diff.html", {"title": f"{model}/{name}: v{old} against v{new}", "nav": "models", "model": model,
                              "name": name, "diff": found, "old": old, "new": new})


# ---------------------------------------------------------------- datastore
def datastore(c: Ctx) -> Page:
    from swamp.app.dashboard_queries import datastore_overview

    c.require("read", "data:*")
    doc = datastore_overview(c.repo)
    done = {k: c.query[k] for k in ("restored", "dropped", "path") if c.query.get(k)}
    return Page("datastore.html", {"title": "Datastore", "nav": "datastore", "doc": doc,
                                   "status_json": json.dumps(doc["status"], indent=2, default=str),
                                   "can_write": c.allowed("write", "data:*"), "done": done})


def conflict(what: str):
    """Restore or drop one conflict copy (``swamp datastore conflicts
    restore|drop COPY``): ``write data:*``, as the copy may be any path."""

    def handler(c: Ctx) -> Response:
        from urllib.parse import urlencode

        from swamp.app import datastore_conflicts

        c.require("write", "data:*")
        copy = (c.form.get("copy") or "").strip()
        if not copy:
            raise ValidationError("say which conflict copy to " + what, hint="use the buttons of the datastore page")
        if what == "restore":
            result = datastore_conflicts.restore(c.repo, copy)
            query = {"restored": result["restored"], "path": result["path"]}
        else:
            result = datastore_conflicts.drop(c.repo, copy)
            query = {"dropped": result["dropped"], "path": result["path"]}
        return RedirectResponse("/ui/datastore?" + urlencode(query), 303)

    return handler


# -------------------------------------------------------------------- audit
def extensions(c: Ctx) -> Page:
    """The pinned extensions, the proposed changes waiting for approval, and
    the history of every change, newest first (``swamp extension history``).
    Read-only; extensions provide model types, so: ``read model:*``."""
    from swamp.app.extension_review import history_of
    from swamp.app.extensions import list_extensions

    c.require("read", "model:*")
    doc = history_of(c.repo)
    return Page("extensions.html", {"title": "Extensions", "nav": "extensions",
                                    "pinned": list_extensions(c.repo)["extensions"], "pending": doc["pending"],
                                    "changes": list(reversed(doc["changes"])),
                                    "require_approval": doc["requireApproval"], "unreadable": doc["unreadable"]})


def audit(c: Ctx) -> Page:
    from swamp.serve.dashboard.audit_view import entries

    page_no = max(1, c.int_query("page", 1))
    who = c.query.get("who") or ""

    def visible(e: dict) -> bool:
        if who and not any(who in s for s in e.get("who") or []):
            return False
        resource = e.get("resource")
        if resource:
            return c.allowed("read", resource)
        return c.allowed("admin", "data:*")  # logins and refusals before any resource: admins only

    rows, more = entries(c.dash.state.audit.path, visible, offset=(page_no - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    return Page("audit.html", {"title": "Audit", "nav": "audit", "rows": rows, "page": page_no, "more": more,
                               "who_filter": who})
