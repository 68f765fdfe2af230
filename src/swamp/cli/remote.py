"""Running a command on a `swamp serve` server (``--server URL`` or
SWAMP_SERVE_URL, with ``--token`` or SWAMP_SERVE_TOKEN): the inputs are
collected here (files and stdin are read on this machine), the server runs
the use case, and the result is rendered here exactly as the command would
render it locally, with the same exit codes.

Commands that can run remotely are in cli/remote_handlers.py: this module
registers the handlers of the model, workflow and data commands, and every
other command's module its own. ``--server`` on any other command is a
usage error; SWAMP_SERVE_URL is simply ignored by them (so a
shell that exports it can still run local commands). Plain urllib: no
client library, and nothing loaded unless a command goes remote."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import click

from swamp.cli.output import emit, say, show_failure_log, table
from swamp.cli.remote_handlers import HANDLERS, SELF_SERVED, command_key, every_handler, explicit_only, runs_on_server
from swamp.cli.run_summary import human_run as _human_run
from swamp.errors import RemoteError, SwampError, UnpublishedError, UsageError

TIMEOUT_S = 3600.0  # a method or a workflow may run long


def _traceparent() -> str | None:
    """The trace context a request carries: the command's span when tracing
    is on, else a --traceparent or TRACEPARENT passed on unchanged."""
    from swamp.util import tracing

    value = tracing.child_env().get("TRACEPARENT") or os.environ.get("TRACEPARENT")
    return value.strip() if value and tracing.valid_traceparent(value) else None


class Client:
    def __init__(self, url: str, token: str | None) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--server {url!r} is not an http:// or https:// URL")
        self.url = url.rstrip("/")
        self.token = token

    def call(self, method: str, path: str, body: Any = None, query: dict | None = None) -> tuple[int, Any]:
        q = {k: ("true" if v is True else "false" if v is False else v) for k, v in (query or {}).items()
             if v is not None}
        url = self.url + "/api/v1" + path + ("?" + urllib.parse.urlencode(q) if q else "")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        traceparent = _traceparent()
        if traceparent:  # the server's span for this request joins the command's trace (docs/tracing.md)
            req.add_header("traceparent", traceparent)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
                status, text = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise SwampError(f"cannot reach the server at {self.url}: {reason}", code="unreachable",
                             hint="is 'swamp serve' running there? check --server or SWAMP_SERVE_URL") from None
        try:
            doc = json.loads(text) if text else None
        except ValueError:
            raise SwampError(f"{self.url} did not answer with JSON (HTTP {status})", code="bad_response",
                             hint="is --server the address of a 'swamp serve'?") from None
        if status >= 400:
            raise RemoteError(doc if isinstance(doc, dict) else {"error": f"HTTP {status}"})
        return status, doc


def _unpublished(doc: dict) -> UnpublishedError:
    return UnpublishedError(doc.get("error", "not published"), hint=doc.get("hint"))


def _cli_strings(values: dict, prefix: tuple = ()) -> list[list[str]]:
    """Paths of the values typed as KEY=VALUE (coerced by the server, as here)."""
    from swamp.util.cli_strings import CliString

    out = []
    for k, v in values.items():
        if isinstance(v, CliString):
            out.append([*prefix, k])
        elif isinstance(v, dict):
            out += _cli_strings(v, (*prefix, k))
    return out


def _plain(values):
    return json.loads(json.dumps(values))


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


# ------------------------------------------------------------------ handlers
@runs_on_server("model method run", {"model_name", "method_name", "direct_name", "input_", "input_file",
                                    "stdin_input", "tag"})
def method_run(client: Client, state, p: dict) -> None:
    from swamp.cli.inputs import collect_batch, parse_pairs

    model = p["model_name"]
    direct = "/" in model
    if direct and not p.get("direct_name"):
        raise UsageError(f"{model} is a type: name the model to run it as",
                         hint=f"swamp model method run {model} {p['method_name']} NAME")
    if not direct and p.get("direct_name"):
        raise UsageError(f"NAME is only for running a type directly; {model!r} is a model",
                         hint=f"swamp model method run {model} {p['method_name']}")
    batch = collect_batch(p["input_"], p["input_file"], p["stdin_input"])
    tags = parse_pairs(p["tag"], "--tag")
    body: dict = {"cliStrings": _cli_strings(batch[0])} if batch[0] else {}
    if len(batch) == 1:
        body["inputs"] = _plain(batch[0])
    else:
        body["batch"] = _plain(batch)
    if tags:
        body["tags"] = tags
    if direct:  # the type run directly as the model NAME
        body["type"], model = model, p["direct_name"]
    status, doc = client.call("POST", f"/models/{_q(model)}/methods/{_q(p['method_name'])}/run", body)
    unpublished = None
    if status == 202:
        unpublished, doc = _unpublished(doc), doc["value"]
    docs = doc if isinstance(doc, list) else [doc]

    def human():
        for rec in docs:
            say(f"{rec['modelName']}.{rec['methodName']}: {rec['status']} in {rec['durationMs']} ms")
            for a in rec.get("dataArtifacts", []):
                say(f"  wrote {a['kind']} {a['name']} version {a['version']}")
            if rec.get("error"):
                say(f"  error: {rec['error']}")
            if rec.get("stderrTail"):
                say(f"  stderr: {rec['stderrTail']}")
            if rec["status"] != "succeeded" and rec.get("logFile"):
                log = client.call("GET", f"/outputs/{_q(rec['id'])}/log")[1]["log"]
                show_failure_log(state, log, f"swamp model output logs {rec['id']}")

    emit(state, doc, human)
    if unpublished is not None:
        raise unpublished
    if any(r["status"] != "succeeded" for r in docs):
        sys.exit(1)


@runs_on_server("workflow resume", {"name", "run_id", "from_step", "input_", "input_file", "stdin_input",
                                   "junit"})
def workflow_resume(client: Client, state, p: dict) -> None:
    from swamp.cli.inputs import collect_inputs

    if p.get("junit"):
        raise UsageError("--junit is not available with --server", hint="fetch the run record, or run locally")
    inputs = collect_inputs(p["input_"], p["input_file"], p["stdin_input"])
    body: dict = {"inputs": _plain(inputs), "cliStrings": _cli_strings(inputs)}
    if p.get("run_id"):
        body["runId"] = p["run_id"]
    if p.get("from_step"):
        body["from"] = p["from_step"]
    status, doc = client.call("POST", f"/workflows/{_q(p['name'])}/resume", body)
    unpublished = None
    if status == 202:
        unpublished, doc = _unpublished(doc), doc["value"]
    emit(state, doc, lambda: _human_run(doc))
    if unpublished is not None:
        raise unpublished
    if doc["status"] in ("failed", "cancelled", "interrupted"):
        sys.exit(1)


@runs_on_server("workflow run", {"name", "input_", "input_file", "stdin_input", "junit", "fail_on", "detach",
                                "from_failed"})
def workflow_run(client: Client, state, p: dict) -> None:
    from swamp.cli.inputs import collect_batch

    if p.get("junit"):
        raise UsageError("--junit is not available with --server", hint="fetch the run record, or run locally")
    batch = collect_batch(p["input_"], p["input_file"], p["stdin_input"])
    if not p.get("name"):
        raise UsageError("missing the workflow's NAME", hint="with --server, give it: swamp workflow run NAME"
                                                             + (" --from-failed RUN_ID" if p.get("from_failed") else ""))
    if p.get("detach"):
        if len(batch) > 1:
            raise UsageError("--detach starts one run; not with a batch from --stdin")
        if p.get("from_failed"):
            raise UsageError("--detach and --from-failed do not go together yet",
                             hint="re-run from failure without --detach, then follow the run it prints")
        body = {"inputs": _plain(batch[0]), "cliStrings": _cli_strings(batch[0]), "failOn": p["fail_on"],
                "wait": False}
        _, doc = client.call("POST", f"/workflows/{_q(p['name'])}/run", body)
        emit(state, doc, f"started run {doc['runId']} of {doc['workflowName']} on the server; "
                         f"follow it: {doc['follow']}")
        return
    results = []
    for inputs in batch:
        body = {"inputs": _plain(inputs), "cliStrings": _cli_strings(inputs), "failOn": p["fail_on"]}
        if p.get("from_failed"):  # re-run that failed run from its failure (workflows/rerun.py)
            body["fromFailed"] = p["from_failed"]
        status, doc = client.call("POST", f"/workflows/{_q(p['name'])}/run", body)
        results.append((_unpublished(doc), doc["value"]) if status == 202 else (None, doc))
    docs = [d for _, d in results]
    if len(batch) > 1:
        for d in docs:
            d.pop("sync", None)  # a batch prints bare run records, as locally
        emit(state, docs, lambda: [say(f"workflow {d['workflowName']}: run {d['id']} {d['status']}") for d in docs])
    else:
        emit(state, docs[0], lambda: _human_run(docs[0]))
    unpublished = next((u for u, _ in results if u is not None), None)
    if unpublished is not None:
        raise unpublished
    if any(d["status"] in ("failed", "cancelled", "interrupted") for d in docs):
        sys.exit(1)


@runs_on_server("workflow history get", {"run_id", "follow"})
def workflow_history_get(client: Client, state, p: dict) -> None:
    fetch = lambda: client.call("GET", f"/runs/{_q(p['run_id'])}")[1]  # noqa: E731
    if p.get("follow"):
        from swamp.cli.follow_run import follow

        follow(state, fetch)
        return
    emit(state, fetch())


@runs_on_server("data get", {"model", "name", "version", "no_content", "workflow"})
def data_get(client: Client, state, p: dict) -> None:
    _, result = client.call("GET", f"/data/{_q(p['model'])}/{_q(p['name'])}",
                            query={"version": p["version"], "content": False if p["no_content"] else None,
                                   "workflow": p.get("workflow")})
    from swamp.cli.data_get import show

    show(state, result)


@runs_on_server("data list", {"model"})
def data_list(client: Client, state, p: dict) -> None:
    _, rows = client.call("GET", "/data", query={"model": p["model"]})
    emit(state, rows, lambda: table(rows, ["model", "name", "latestVersion", "versions", "kind", "updatedAt"]))


@runs_on_server("data versions", {"model", "name"})
def data_versions(client: Client, state, p: dict) -> None:
    _, rows = client.call("GET", f"/data/{_q(p['model'])}/{_q(p['name'])}/versions")
    emit(state, rows, lambda: table(rows, ["version", "createdAt", "size"]))


@runs_on_server("workflow history", {"name", "limit"})
@runs_on_server("workflow history list", {"name", "limit"})
def workflow_history(client: Client, state, p: dict) -> None:
    _, rows = client.call("GET", f"/workflows/{_q(p['name'])}/runs", query={"limit": p["limit"]})
    emit(state, rows, lambda: table(rows, ["id", "status", "startedAt", "durationMs", "steps", "failedSteps"]))


def _decide(client: Client, state, p: dict, decision: str) -> None:
    verb = "approve" if decision == "approved" else "reject"
    status, result = client.call("POST", f"/workflows/{_q(p['name'])}/{verb}",
                                 {k: v for k, v in (("step", p["step"]), ("runId", p["run_id"]),
                                                    ("reason", p["reason"]),
                                                    ("resume", False if p.get("no_resume") else None))
                                  if v is not None})
    if status == 202:
        raise UnpublishedError(result["error"], hint=result.get("hint"), value=result["value"])
    from swamp.app.approvals import decision_line

    if result.get("resumed"):
        follow = f"; the server continues the run (follow it: swamp workflow history get {result['runId']} --follow)"
    else:
        follow = (f"; {result['resumeHint']}" if result.get("resumeHint") else "") + \
            f"; continue with: swamp workflow resume {p['name']} --run {result['runId']}"
    emit(state, result, decision_line(result) + follow)


@runs_on_server("workflow approve", {"name", "step", "run_id", "reason", "no_resume"})
def workflow_approve(client: Client, state, p: dict) -> None:
    _decide(client, state, p, "approved")


@runs_on_server("workflow reject", {"name", "step", "run_id", "reason", "no_resume"})
def workflow_reject(client: Client, state, p: dict) -> None:
    _decide(client, state, p, "rejected")


@runs_on_server("workflow cancel", {"name", "run_id"})
def workflow_cancel(client: Client, state, p: dict) -> None:
    status, result = client.call("POST", f"/workflows/{_q(p['name'])}/cancel",
                                 {"runId": p["run_id"]} if p["run_id"] else {})
    if status == 202:
        raise UnpublishedError(result["error"], hint=result.get("hint"), value=result["value"])
    emit(state, result, f"run {result['id']}: " + ("cancel requested" if result["cancelRequested"]
                                                  else result["status"]))


def target(state) -> tuple[str | None, bool]:
    """(server URL, whether --server said so) or (None, False)."""
    if state.server:
        return state.server, True
    return os.environ.get("SWAMP_SERVE_URL") or None, False


def dispatch(ctx: click.Context, state, params: dict, url: str, explicit: bool):
    """Run the command on the server, or return NotImplemented to run it here."""
    key = command_key(ctx)
    if key in SELF_SERVED or (explicit_only(key) and not explicit):
        return NotImplemented
    handler, known = HANDLERS.get(key, (None, frozenset()))
    if handler is None:
        if explicit:
            raise UsageError(f"'swamp {key}' runs only locally; --server is for: "
                             + ", ".join(sorted(every_handler(ctx))))
        return NotImplemented
    unsupported = [k for k, v in params.items() if k not in known and v not in (None, False, (), [])]
    if unsupported:
        names = ", ".join("--" + k.rstrip("_").replace("_", "-") for k in sorted(unsupported))
        raise UsageError(f"{names} not available with --server for 'swamp {key}'", hint="run it locally")
    from swamp.cli.logs import configure

    configure(json_mode=state.json)
    token = state.token or os.environ.get("SWAMP_SERVE_TOKEN") or None
    if token is None:  # the local user's token of a server started here, sent to that address only
        from swamp.app.logins import for_url

        token = for_url(url)
    handler(Client(url, token), state, params)
    return None
