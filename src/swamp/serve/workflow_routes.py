"""The workflow routes' handlers: run (waiting, streaming its steps' events,
or detached), resume, approve, reject, signal, cancel, and read runs, their
history and logs. Each calls one ``swamp.app`` use case (routes.py is the
table that names them)."""

from __future__ import annotations

from swamp.errors import HttpError, UnpublishedError, ValidationError
from swamp.serve.calls import API, Call, Reply, inputs_of, unpublished_reply


class StepLogs:
    """A workflow's step logs as ``log`` events naming their step: a step's
    method runs in the thread that marked it running, so the observer notes
    which step each thread runs and ``on_log`` looks its own thread up."""

    def __init__(self, call: Call) -> None:
        import threading

        self.call = call
        self.current = threading.get_ident
        self.steps: dict[int, dict] = {}

    def observe(self, run, job, step) -> None:
        if step.status == "running":
            self.steps[self.current()] = {"runId": run.id, "job": job.name, "step": step.name}
        elif self.steps.get(self.current(), {}).get("step") == step.name:
            self.steps.pop(self.current(), None)

    def on_log(self, line: str) -> None:
        self.call.emit("log", {**self.steps.get(self.current(), {}), "line": line})


def step_observer(call: Call, name: str, logs: "StepLogs | None" = None):
    def observe(run, job, step):
        call.note({"kind": "workflow", "workflow": name, "runId": run.id})
        if logs is not None:
            logs.observe(run, job, step)
        event = {"runId": run.id, "workflow": run.workflowName, "job": job.name, "step": step.name,
                 "status": step.status}
        if step.error:
            event["error"] = step.error
        if step.stderrTail:
            event["stderrTail"] = step.stderrTail
        if step.skipReason:
            event["skipReason"] = step.skipReason
        if step.attempt:  # a step that may be retried: which attempt this is (workflows/retries.py)
            event["attempt"], event["maxAttempts"] = step.attempt, step.maxAttempts
        call.emit("step", event)

    # A placed step's log lines as the worker logs them (app/remote_steps.py).
    observe.step_log = lambda run, job, step, line: call.emit(
        "log", {"runId": run.id, "job": job.name, "step": step.name, "line": line})
    return observe


def _run_doc(call: Call, result):
    from swamp.app.workflow_files import run_json

    doc = run_json(call.repo, result.run)
    if result.shared:
        doc["sync"] = result.sync.to_json()
    if result.unpublished is not None:
        doc["published"] = False
        return unpublished_reply(result.unpublished.with_value(doc))
    return doc


def workflow_run(call: Call):
    from swamp.app import workflows

    name = call.path["workflow"]
    call.note({"kind": "workflow", "workflow": name})
    if call.body.get("wait") is False:
        if call.body.get("fromFailed"):
            raise HttpError("validation", '"fromFailed" with "wait": false is not supported yet',
                            hint='re-run from failure with "wait": true (the default)')
        return _detached_run(call, name)
    logs = StepLogs(call)
    result = workflows.run(call.repo, name, inputs_of(call), fail_on=call.body.get("failOn", "low"),
                           observer=step_observer(call, name, logs), on_log=logs.on_log, by=call.caller,
                           from_failed=call.body.get("fromFailed"), run_id=call.run_id)
    return _run_doc(call, result)


def _detached_run(call: Call, name: str) -> Reply:
    """``"wait": false``: checked now, run in the background, answered 202
    with the run's id and a Location to follow once its record exists."""
    import threading
    from urllib.parse import quote

    from swamp.app.detached_runs import check_startable, started_doc, wait_for_record
    from swamp.util.ids import new_id

    if call.start_later is None:
        raise ValidationError("\"wait\": false needs a server to run the workflow on")
    inputs, fail_on = inputs_of(call), call.body.get("failOn", "low")
    wid = check_startable(call.repo, name, inputs, fail_on)
    run_id = call.run_id or new_id()
    started = threading.Event()  # set when the background thread ends (a run that could not start)
    call.start_later(name, inputs, fail_on, run_id, started.set)
    run = wait_for_record(call.repo, wid, run_id, going=lambda: not started.is_set())
    location = f"{API}/workflows/{quote(name, safe='')}/runs/{run_id}"
    return Reply(202, {**started_doc(name, run_id, run), "location": location}, headers={"Location": location})


def workflow_resume(call: Call):
    from swamp.app import workflows

    name = call.path["workflow"]
    call.note({"kind": "workflow", "workflow": name})
    logs = StepLogs(call)
    result = workflows.resume(call.repo, name, call.body.get("runId"), inputs_of(call),
                              observer=step_observer(call, name, logs), from_step=call.body.get("from"),
                              on_log=logs.on_log, by=call.caller)
    return _run_doc(call, result)


def decision_handler(decision: str):
    def handler(call: Call):
        from swamp.app import workflows

        b = call.body
        try:
            doc = workflows.decide(call.repo, call.path["workflow"], b["step"], decision, b.get("runId"),
                                   b.get("reason"), by=call.caller)
        except UnpublishedError as e:
            return unpublished_reply(e)
        return _continue_decided(call, doc)

    return handler


def _continue_decided(call: Call, doc: dict) -> dict:
    """Once a decision leaves nothing else waiting, this server continues
    the run in the background (as the CLI continues it in its process),
    if the caller may run the workflow; ``resumed`` says whether it does."""
    from swamp.app.approvals import continuable
    from swamp.errors import HttpError, SwampError

    name = call.path["workflow"]
    if call.body.get("resume") is False or call.resume_later is None:
        return {**doc, "resumed": False}
    if not continuable(call.repo, name, doc["runId"]):
        return {**doc, "resumed": False, "resumeHint": "the run still waits for another decision or a signal"}
    try:
        call.authorize("run", f"workflow:{name}")
    except HttpError:
        return {**doc, "resumed": False,
                "resumeHint": f"continuing the run needs run on workflow:{name}, which this caller lacks"}
    try:
        call.resume_later(name, doc["runId"])
    except SwampError as e:  # at its run limit, say: the decision stands, the run waits
        return {**doc, "resumed": False, "resumeHint": f"not continued: {e.message}"}
    return {**doc, "resumed": True}


def workflow_signal(call: Call):
    from swamp.app import signals

    b = call.body
    try:
        return signals.signal(call.repo, call.path["workflow"], b["step"], b["message"], b.get("runId"),
                              by=call.caller)
    except UnpublishedError as e:
        return unpublished_reply(e)


def signals_list(call: Call):
    from swamp.app import signals

    return signals.waiting(call.repo, call.query.get("workflow"))


def workflow_cancel(call: Call):
    from swamp.app import workflows

    try:
        return workflows.cancel(call.repo, call.path["workflow"], call.body.get("runId"), by=call.caller)
    except UnpublishedError as e:
        return unpublished_reply(e)


_RUN_INDEXES: dict = {}  # repository root -> app.run_history's index, kept while the server runs


def workflow_history(call: Call):
    from swamp.app import run_history

    index = _RUN_INDEXES.get(call.repo.root)
    if index is None:
        index = _RUN_INDEXES.setdefault(call.repo.root, run_history.index_for(call.repo))
    q = call.query
    if q.get("offset", 0) < 0 or q.get("limit", 1) < 1:
        raise ValidationError("offset is 0 or more, limit 1 or more")
    return run_history.history_page(call.repo, index, call.path["workflow"], offset=q.get("offset", 0),
                                    limit=q.get("limit"), status=q.get("status"))


def _run_id(call: Call) -> str | None:
    rid = call.path["run"]
    return None if rid == "latest" else rid


def workflow_run_get(call: Call):
    from swamp.app import workflows
    from swamp.app.workflow_files import run_json

    return run_json(call.repo, workflows.get_run(call.repo, call.path["workflow"], _run_id(call)))


def run_get(call: Call):
    """A run by its id alone (or a unique start of it), or a workflow's
    name for its newest run, for whoever may read its workflow: what a
    detached run's starter follows."""
    from swamp.app.workflow_files import run_json
    from swamp.serve import run_refs

    return run_json(call.repo, run_refs.find(call, call.path["run"]))  # an id, or a workflow's name


def workflow_logs(call: Call):
    from swamp.app import workflows

    return workflows.logs(call.repo, call.path["workflow"], _run_id(call))
