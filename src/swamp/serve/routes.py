"""The route table: each route names its use case, the action and resource
access control checks, the query parameters and body fields it accepts
(anything else is refused), and whether it can stream its events. The
OpenAPI document is built from this table, so it cannot drift from it.

Handlers are plain synchronous functions of a ``Call``; they run in a
worker thread and return a JSON document (status 200) or a ``Reply``
(what they get and answer is calls.py). The models' and data's handlers are
here; the workflows' are workflow_routes.py."""

from __future__ import annotations

from swamp.errors import UnpublishedError, ValidationError
from swamp.serve.calls import API, Body, Call, Reply, Route, inputs_of, unpublished_reply
from swamp.serve.workflow_routes import (decision_handler, run_get, signals_list, workflow_cancel, workflow_history,
                                         workflow_logs, workflow_resume, workflow_run, workflow_run_get,
                                         workflow_signal)


# ------------------------------------------------------------------- models
def _method_doc(result) -> dict:
    return result.to_json()


def models_list(call: Call):
    from swamp.app.model_definitions import search_models

    return search_models(call.repo, call.query.get("q"))


def model_get(call: Call):
    from swamp.app.model_definitions import get_model

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
        inputs_list = [inputs_of(call, b, "batch") for b in batch]  # cliStrings apply to each
    else:
        inputs_list = [inputs_of(call)]
    _authorize_methodinputs_of(call, inputs_list)
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
        return unpublished_reply(results[0].unpublished.with_value(doc))
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


def _authorize_methodinputs_of(call: Call, inputs_list: list[dict]) -> None:
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
    # Only rows the caller may read are tested: a predicate over content must not learn of others' data.
    return data.query(call.repo, b["predicate"], limit=b.get("limit", 100), all_versions=b.get("allVersions", False),
                      readable=lambda r: call.allowed("read", f"data:{r['model']}/{r['name']}"))


def data_delete(call: Call):
    from swamp.app import data

    try:
        return data.delete(call.repo, call.path["model"], call.path["name"], call.query.get("version"))
    except UnpublishedError as e:
        return unpublished_reply(e)


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
          decision_handler("approved"), "approve", _workflow, body=Body(_DECISION), changes=True),
    Route("POST", f"{API}/workflows/{{workflow}}/reject", "rejectStep", "Reject a step waiting for approval",
          decision_handler("rejected"), "approve", _workflow, body=Body(_DECISION), changes=True),
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
