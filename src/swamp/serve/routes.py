"""The route table: each route names its use case, the action and resource
access control checks, the query parameters and body fields it accepts
(anything else is refused), and whether it can stream its events. The
OpenAPI document is built from this table, so it cannot drift from it.

Handlers are plain synchronous functions of a ``Call``; they run in a
worker thread and return a JSON document (status 200) or a ``Reply``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from swamp.errors import UnpublishedError, ValidationError


@dataclass
class Reply:
    status: int
    doc: Any
    headers: dict[str, str] | None = None


@dataclass
class Call:
    repo: Any
    path: dict[str, str]
    query: dict[str, Any]
    body: dict[str, Any]
    #: send an event to a streaming client (does nothing otherwise); any thread
    emit: Callable[[str, dict], None] = lambda event, data: None
    #: note what this request is running, for a graceful shutdown
    note: Callable[[dict], None] = lambda info: None
    #: check an action on a resource found only while handling (403 if denied)
    authorize: Callable[[str, str], None] = lambda action, resource: None
    #: who is calling, as records name them (util/actors.py: "token:NAME", "anonymous")
    caller: str | None = None
    #: continue a run in the background on this server: (workflow, run id) (serve/app.py)
    resume_later: Callable[[str, str], None] | None = None
    #: start a workflow run in the background on this server: (workflow, inputs, fail_on, run id, on_end)
    start_later: Callable[[str, dict, str, str, Callable[[], None]], None] | None = None
    #: the run this request starts or continues, when known before it runs (every SSE event names it)
    run_id: str | None = None
    #: run work(): str in the background on this server, counted as the caller's run (serve/app.py)
    in_background: Callable[[str, Callable[[], str]], None] | None = None


@dataclass
class Body:
    """The body fields a route accepts: name -> (JSON type, required, description)."""

    fields: dict[str, tuple[type | tuple, bool, str]]


@dataclass
class Route:
    method: str
    path: str
    op: str
    summary: str
    run: Callable[[Call], Any]
    #: what access control checks: an action and the resource it acts on
    action: str | None = None
    resource: Callable[[Call], str] | None = None
    query: dict[str, tuple[type, str]] = field(default_factory=dict)
    body: Body | None = None
    #: answers ``Accept: text/event-stream`` with the run's events
    stream: bool = False
    #: lists: each row's resource; rows the caller may not read are left out
    row_resource: Callable[[dict], str] | None = None
    #: changes state: refused while the server shuts down
    changes: bool = False
    #: runs a method or a workflow: counted against the run limits
    runs: bool = False
    #: the run id a request will start or continue, known before it runs (None: not known)
    run_id: Callable[[Call], str | None] | None = None


# ------------------------------------------------------------------ helpers
def _inputs(call: Call, values=None, key: str = "inputs") -> dict:
    """The inputs map, with the leaves listed in ``cliStrings`` treated as
    text typed on a command line (coerced to their declared type, as
    ``--input KEY=VALUE`` is): that is how ``--server`` sends ``--input``."""
    from swamp.models.inputs import CliString

    values = (call.body.get(key) or {}) if values is None else values
    if not isinstance(values, dict):
        raise ValidationError(f"{key} must be a JSON object")
    for path in call.body.get("cliStrings") or []:
        if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
            raise ValidationError("cliStrings holds paths: lists of keys, such as [\"a\", \"b\"]")
        node = values
        for k in path[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if not isinstance(node, dict) or not isinstance(node.get(path[-1]), str):
            raise ValidationError(f"cliStrings: {'.'.join(path)} is not a string in {key}")
        node[path[-1]] = CliString(node[path[-1]])
    return values


def _unpublished(e: UnpublishedError) -> Reply:
    from swamp.serve.errors import error_doc

    return Reply(202, error_doc(e))


def _method_doc(result) -> dict:
    return result.to_json()


# ------------------------------------------------------------------- models
def models_list(call: Call):
    from swamp.models.service import search_models

    return search_models(call.repo, call.query.get("q"))


def model_get(call: Call):
    from swamp.models.service import get_model

    return get_model(call.repo, call.path["model"])


def method_run(call: Call):
    from swamp.app.methods import run_batch

    call.note({"kind": "method", "model": call.path["model"], "method": call.path["method"]})
    batch = call.body.get("batch")
    if batch is not None:
        if "inputs" in call.body:
            raise ValidationError("give either inputs or batch, not both")
        if not batch or not all(isinstance(b, dict) for b in batch):
            raise ValidationError("batch is a non-empty list of input maps")
        inputs_list = [_inputs(call, b, "batch") for b in batch]  # cliStrings apply to each
    else:
        inputs_list = [_inputs(call)]
    _authorize_method_inputs(call, inputs_list)
    if call.body.get("wait") is False:
        return _detached_method(call, inputs_list)
    on_log = lambda line: call.emit("log", {"line": line})  # noqa: E731
    if call.body.get("type"):  # the type run directly as the model named in the path
        from swamp.app.methods import run_direct

        results = run_direct(call.repo, call.body["type"], call.path["method"], call.path["model"], inputs_list,
                             tags=call.body.get("tags"), on_log=on_log, by=call.caller)
    else:
        results = run_batch(call.repo, call.path["model"], call.path["method"], inputs_list,
                            tags=call.body.get("tags"), on_log=on_log, by=call.caller)
    docs = [_method_doc(r) for r in results]
    doc = docs if batch is not None else docs[0]
    if results and results[0].unpublished is not None:
        return _unpublished(results[0].unpublished.with_value(doc))
    return doc


#: method runs this server started with "wait": false and that have not ended: output id -> what
#: GET /outputs/ID answers until the record exists (it is written when the method ends)
_DETACHED_METHODS: dict[str, dict] = {}


def _detached_method(call: Call, inputs_list: list[dict]) -> Reply:
    """``"wait": false``: checked now, run in the background, answered 202
    with the output record's id and a Location (``running`` until it ends)."""
    from swamp.app.methods import check_runnable, run_batch
    from swamp.util.ids import new_id

    model, method = call.path["model"], call.path["method"]
    if call.in_background is None:
        raise ValidationError("\"wait\": false needs a server to run the method on")
    if len(inputs_list) != 1 or call.body.get("type"):
        raise ValidationError("\"wait\": false runs one inputs map of a model's definition",
                              hint="leave out batch and type, or wait for the answer")
    check_runnable(call.repo, model, method, inputs_list[0])
    output_id = new_id()
    location = f"{API}/outputs/{output_id}"
    doc = {"id": output_id, "modelName": model, "methodName": method, "status": "running", "location": location}
    _DETACHED_METHODS[output_id] = {k: v for k, v in doc.items() if k != "location"}

    def work() -> str:
        try:
            done = run_batch(call.repo, model, method, inputs_list, tags=call.body.get("tags"), by=call.caller,
                             output_id=output_id)
            return f"{call.caller}: method run {output_id} of {model}.{method} {done[0].record.status}"
        finally:
            _DETACHED_METHODS.pop(output_id, None)

    call.in_background(f"run {model}.{method}", work)
    return Reply(202, doc, headers={"Location": location})


def _authorize_method_inputs(call: Call, inputs_list: list[dict]) -> None:
    """``run`` covers the inputs a definition declares and the arguments it
    leaves open; replacing an argument it fixes, or running a ``type``
    directly (which writes an automatic definition with the caller's
    values), needs ``write`` on the model (app/run_grants.py)."""
    from swamp.errors import HttpError

    model = call.path["model"]
    if call.body.get("type"):
        why = f"running the type {call.body['type']!r} directly as model {model!r}"
    else:
        from swamp.app.run_grants import replaced_arguments

        replaced = replaced_arguments(call.repo, model, call.path["method"], inputs_list)
        if not replaced:
            return
        why = (f"the inputs replace {', '.join(replaced)}, which the definition of model {model!r} fixes "
               f"({'they are not inputs' if len(replaced) > 1 else 'it is not an input'} it declares)")
    try:
        call.authorize("write", f"model:{model}")
    except HttpError:
        raise HttpError("forbidden", f"{why}: that needs write on model:{model}",
                        hint="give only the inputs the definition declares and the arguments it leaves open "
                             "(swamp model get NAME shows them), or ask an admin for write on the model") from None


def outputs_list(call: Call):
    from swamp.app import models

    q = call.query
    return models.outputs(call.repo, q.get("model"), method=q.get("method"), status=q.get("status"),
                          limit=q.get("limit", 50))


def output_get(call: Call):
    from swamp.app import models
    from swamp.errors import NotFoundError

    try:
        doc = models.output(call.repo, call.path["id"])
    except NotFoundError:
        doc = dict(_DETACHED_METHODS.get(call.path["id"]) or {})  # a detached run still going here
        if not doc:
            raise
    call.authorize("read", f"model:{doc.get('modelName')}")
    return doc


def output_log(call: Call):
    from swamp.app import models

    call.authorize("read", f"model:{models.output(call.repo, call.path['id']).get('modelName')}")
    return models.output_log(call.repo, call.path["id"])


# ---------------------------------------------------------------- workflows
class _StepLogs:
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


def _observer(call: Call, name: str, logs: "_StepLogs | None" = None):
    def observe(run, job, step):
        call.note({"kind": "workflow", "workflow": name, "runId": run.id})
        if logs is not None:
            logs.observe(run, job, step)
        event = {"runId": run.id, "workflow": run.workflowName, "job": job.name, "step": step.name,
                 "status": step.status}
        if step.error:
            event["error"] = step.error
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
    from swamp.workflows.service import run_json

    doc = run_json(call.repo, result.run)
    if result.shared:
        doc["sync"] = result.sync.to_json()
    if result.unpublished is not None:
        doc["published"] = False
        return _unpublished(result.unpublished.with_value(doc))
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
    logs = _StepLogs(call)
    result = workflows.run(call.repo, name, _inputs(call), fail_on=call.body.get("failOn", "low"),
                           observer=_observer(call, name, logs), on_log=logs.on_log, by=call.caller,
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
    inputs, fail_on = _inputs(call), call.body.get("failOn", "low")
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
    logs = _StepLogs(call)
    result = workflows.resume(call.repo, name, call.body.get("runId"), _inputs(call),
                              observer=_observer(call, name, logs), from_step=call.body.get("from"),
                              on_log=logs.on_log, by=call.caller)
    return _run_doc(call, result)


def _decide(decision: str):
    def handler(call: Call):
        from swamp.app import workflows

        b = call.body
        try:
            doc = workflows.decide(call.repo, call.path["workflow"], b["step"], decision, b.get("runId"),
                                   b.get("reason"), by=call.caller)
        except UnpublishedError as e:
            return _unpublished(e)
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
        return _unpublished(e)


def signals_list(call: Call):
    from swamp.app import signals

    return signals.waiting(call.repo, call.query.get("workflow"))


def workflow_cancel(call: Call):
    from swamp.app import workflows

    try:
        return workflows.cancel(call.repo, call.path["workflow"], call.body.get("runId"), by=call.caller)
    except UnpublishedError as e:
        return _unpublished(e)


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
    from swamp.workflows.service import run_json

    return run_json(call.repo, workflows.get_run(call.repo, call.path["workflow"], _run_id(call)))


def run_get(call: Call):
    """A run by its id alone (or a unique start of it), for whoever may read
    its workflow: what a detached run's starter follows."""
    from swamp.app import workflows
    from swamp.workflows.service import run_json

    run = workflows.run_by_id(call.repo, call.path["run"])
    call.authorize("read", f"workflow:{run.workflowName}")
    return run_json(call.repo, run)


def workflow_logs(call: Call):
    from swamp.app import workflows

    return workflows.logs(call.repo, call.path["workflow"], _run_id(call))


# --------------------------------------------------------------------- data
def data_list(call: Call):
    from swamp.app import data

    return data.list_names(call.repo, call.query.get("model"))


def data_get(call: Call):
    from swamp.app import data

    return data.get(call.repo, call.path["model"], call.path["name"], call.query.get("version"),
                    content=call.query.get("content", True), workflow=call.query.get("workflow"))


def data_versions(call: Call):
    from swamp.app import data

    return data.versions(call.repo, call.path["model"], call.path["name"])


def data_search(call: Call):
    from swamp.app import data

    q = call.query
    return data.search(call.repo, q.get("q"), model=q.get("model"), limit=q.get("limit", 100),
                       all_versions=q.get("allVersions", False))


def data_query(call: Call):
    from swamp.app import data

    b = call.body
    return data.query(call.repo, b["predicate"], limit=b.get("limit", 100), all_versions=b.get("allVersions", False))


def data_delete(call: Call):
    from swamp.app import data

    try:
        return data.delete(call.repo, call.path["model"], call.path["name"], call.query.get("version"))
    except UnpublishedError as e:
        return _unpublished(e)


def datastore_status(call: Call):
    from swamp.app.datastore import status

    return status(call.repo)


# -------------------------------------------------------------------- table
_RUN_INPUTS = {
    "inputs": (dict, False, "the inputs, as JSON values"),
    "cliStrings": (list, False, "paths (lists of keys) of string inputs to coerce like --input KEY=VALUE "
                               "(with batch: in every map)"),
}


_DECISION = {"step": (str, True, "STEP or JOB/STEP"),
             "runId": (str, False, "the run (needed when several runs wait at STEP)"),
             "reason": (str, False, "why"),
             "resume": (bool, False, "false: only record the decision (default: continue the run once nothing "
                                     "else waits, when the caller may run the workflow)")}


def new_id_for(c: Call) -> str:
    from swamp.util.ids import new_id

    return new_id()


def _model(c: Call) -> str:
    return f"model:{c.path['model']}"


def _workflow(c: Call) -> str:
    return f"workflow:{c.path['workflow']}"


def _data(c: Call) -> str:
    return f"data:{c.path['model']}/{c.path['name']}"


API = "/api/v1"

ROUTES: list[Route] = [
    Route("GET", f"{API}/models", "listModels", "Model definitions whose name or type contains q", models_list,
          query={"q": (str, "text to look for")}, row_resource=lambda r: f"model:{r['name']}"),
    Route("GET", f"{API}/models/{{model}}", "getModel", "One model definition", model_get, "read", _model),
    Route("POST", f"{API}/models/{{model}}/methods/{{method}}/run", "runMethod",
          "Run a method; returns its output record (a failed method is status failed, HTTP 200)", method_run,
          "run", _model, body=Body({**_RUN_INPUTS, "tags": (dict, False, "tags for the data this run writes"),
                                    "batch": (list, False, "several input maps, run in one session"),
                                    "type": (str, False, "run this model type directly as the model named "
                                                         "in the path (no definition written first)"),
                                    "wait": (bool, False, "false: answer 202 at once with the output record's id "
                                                          "and a Location header (one inputs map; default: true)")}),
          stream=True, changes=True, runs=True),
    Route("GET", f"{API}/outputs", "listOutputs", "Method runs, newest first", outputs_list,
          query={"model": (str, "only this model"), "method": (str, "only this method"),
                 "status": (str, "succeeded, failed or cancelled"), "limit": (int, "at most this many (50)")},
          row_resource=lambda r: f"model:{r['modelName']}"),
    Route("GET", f"{API}/outputs/{{id}}", "getOutput", "One method run's record", output_get),
    Route("GET", f"{API}/outputs/{{id}}/log", "getOutputLog", "One method run's log", output_log),
    Route("POST", f"{API}/workflows/{{workflow}}/run", "runWorkflow", "Run a workflow; returns its run record",
          workflow_run, "run", _workflow,
          body=Body({**_RUN_INPUTS, "failOn": (str, False, "low, medium or high: the lowest failing severity"),
                     "fromFailed": (str, False, "re-run this failed run from its failure: only the steps that "
                                                "failed or did not run run"),
                     "wait": (bool, False, "false: answer 202 at once with the run's id and a Location header "
                                           "to follow it (default: true, answer when the run ends)")}),
          stream=True, changes=True, runs=True, run_id=new_id_for),
    Route("POST", f"{API}/workflows/{{workflow}}/resume", "resumeWorkflow", "Continue a suspended run",
          workflow_resume, "run", _workflow,
          body=Body({**_RUN_INPUTS, "runId": (str, False, "the run (default: the newest suspended one)"),
                     "from": (str, False, "restart a failed or cancelled run from this STEP (or JOB/STEP)")}),
          stream=True, changes=True, runs=True, run_id=lambda c: c.body.get("runId")),
    Route("POST", f"{API}/workflows/{{workflow}}/approve", "approveStep", "Approve a step waiting for approval",
          _decide("approved"), "approve", _workflow, body=Body(_DECISION), changes=True),
    Route("POST", f"{API}/workflows/{{workflow}}/reject", "rejectStep", "Reject a step waiting for approval",
          _decide("rejected"), "approve", _workflow, body=Body(_DECISION), changes=True),
    Route("POST", f"{API}/workflows/{{workflow}}/signal", "signalStep",
          "Send a message to a step waiting for a signal (the first one settles it; a later one is 409)",
          workflow_signal, "approve", _workflow,
          body=Body({"step": (str, True, "STEP or JOB/STEP"), "message": (dict, True, "the message, a JSON object"),
                     "runId": (str, False, "the run (default: the newest one waiting there)")}), changes=True),
    Route("GET", f"{API}/signals", "listSignals", "Steps of suspended or running runs waiting for a signal",
          signals_list, query={"workflow": (str, "only this workflow's")},
          row_resource=lambda r: f"workflow:{r['workflowName']}"),
    Route("POST", f"{API}/workflows/{{workflow}}/cancel", "cancelWorkflow",
          "Cancel a suspended run, or ask a running one to stop", workflow_cancel, "run", _workflow,
          body=Body({"runId": (str, False, "the run (default: the newest unfinished one)")}), changes=True),
    Route("GET", f"{API}/workflows/{{workflow}}/runs", "workflowHistory", "Runs, newest first", workflow_history,
          "read", _workflow, query={"limit": (int, "at most this many"), "offset": (int, "skip this many (0)"),
                                    "status": (str, "only runs in this status")}),
    Route("GET", f"{API}/workflows/{{workflow}}/runs/{{run}}", "getWorkflowRun",
          "One run record ('latest' for the newest)", workflow_run_get, "read", _workflow),
    Route("GET", f"{API}/workflows/{{workflow}}/runs/{{run}}/log", "getWorkflowRunLog",
          "A run's log ('latest' for the newest)", workflow_logs, "read", _workflow),
    Route("GET", f"{API}/runs/{{run}}", "getRun", "One run record by its id (read on its workflow)", run_get),
    Route("GET", f"{API}/data", "listData", "Data names with their latest version", data_list,
          query={"model": (str, "only this model's data")},
          row_resource=lambda r: f"data:{r['model']}/{r['name']}"),
    Route("GET", f"{API}/data/search", "searchData", "Data whose name, spec, type or tags contain q",
          data_search, query={"q": (str, "text"), "model": (str, "only this model"),
                              "limit": (int, "at most (100)"), "allVersions": (bool, "every version")},
          row_resource=lambda r: f"data:{r['model']}/{r['name']}"),
    Route("POST", f"{API}/data/query", "queryData", "Data versions for which a CEL predicate holds", data_query,
          body=Body({"predicate": (str, True, "a CEL expression over name, version, specName, size, tags, ..."),
                     "limit": (int, False, "at most (100)"), "allVersions": (bool, False, "every version")}),
          row_resource=lambda r: f"data:{r['model']}/{r['name']}"),
    Route("GET", f"{API}/data/{{model}}/{{name}}", "getData", "One version of a model's data (the highest by default)",
          data_get, "read", _data, query={"version": (int, "a version number"),
                                         "content": (bool, "include the content (true)"),
                                         "workflow": (str, "the highest version a workflow's runs wrote "
                                                           "(its name), or one run's (its id)")}),
    Route("DELETE", f"{API}/data/{{model}}/{{name}}", "deleteData", "Delete data (every version, or one)",
          data_delete, "write", _data, query={"version": (int, "only this version")}, changes=True),
    Route("GET", f"{API}/data/{{model}}/{{name}}/versions", "dataVersions", "The versions of a model's data",
          data_versions, "read", _data),
    Route("GET", f"{API}/datastore/status", "datastoreStatus", "The datastore: kind, location, head, dirty files",
          datastore_status, "read", lambda c: "data:*"),
]

# access administration (swamp access grant|group|check --server): serve/access_routes.py, admin only
from swamp.serve.access_routes import SPECS as _ACCESS  # noqa: E402

ROUTES += [Route(method, API + path, op, summary, run, "admin", lambda c, r=resource: r, query=query,
                 body=Body(body) if body else None, changes=changes)
           for method, path, op, summary, run, resource, query, body, changes in _ACCESS]
