"""Tracing through `swamp serve`: each API request is a span, a child of the
caller's trace when the request carries a ``traceparent`` header (as
``swamp --server`` sends it), and a trace of its own otherwise. The spans
carry names and codes, never what the request sent."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
CALLER = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
SECRET = "tr4ce-s3cret-value"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("traced") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    # The console exporter writes each span as JSON to the server's stderr (its log).
    server = Serve(repo, env={"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "swamp-serve"})
    yield server
    server.stop()


def _spans(log_text: str) -> list[dict]:
    """The JSON span documents in a log that has other lines too."""
    decoder, out, i = json.JSONDecoder(), [], 0
    while (i := log_text.find("{\n", i)) != -1:
        try:
            doc, end = decoder.raw_decode(log_text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(doc, dict) and "context" in doc:
            out.append(doc)
        i = end
    return out


def _wait_for_span(served, predicate) -> dict:
    from tests.fixtures.servers import wait_until

    found: list[dict] = []

    def seen() -> bool:
        found[:] = [s for s in _spans(served.log.read_text(errors="replace")) if predicate(s)]
        return bool(found)

    wait_until("the request's span in the server's log", seen, [served.proc], served.log, 20)
    return found[-1]


def test_a_request_with_a_traceparent_is_a_child_of_the_callers_span(served):
    reply = served.run_method("hello", "execute", {"run": f"echo {SECRET}"}, headers={"traceparent": CALLER})
    assert reply.status == 200, reply.doc
    request = _wait_for_span(served, lambda s: s["name"] == "swamp.serve.request"
                             and s["context"]["trace_id"] == "0x" + CALLER_TRACE)
    assert request["parent_id"] == "0x" + CALLER_SPAN
    assert request["attributes"]["swamp.op"] == "runMethod"
    assert request["attributes"]["swamp.status_code"] == 200
    assert request["resource"]["attributes"]["service.name"] == "swamp-serve"
    method = _wait_for_span(served, lambda s: s["name"] == "swamp.method"
                            and s["context"]["trace_id"] == "0x" + CALLER_TRACE)
    assert method["attributes"]["swamp.model"] == "hello"
    # The method run hangs under the request (perhaps through a session span).
    ids = {s["context"]["span_id"]: s for s in _spans(served.log.read_text(errors="replace"))}
    parent, chain = method["parent_id"], []
    while parent in ids and parent != request["context"]["span_id"]:
        chain.append(ids[parent]["name"])
        parent = ids[parent]["parent_id"]
    assert parent == request["context"]["span_id"], chain
    assert SECRET not in json.dumps(_spans(served.log.read_text(errors="replace")))


def test_a_request_without_one_starts_a_trace_of_its_own_and_a_failure_is_marked(served):
    reply = served.run_method("nobody", "execute")
    assert reply.status == 404
    request = _wait_for_span(served, lambda s: s["name"] == "swamp.serve.request"
                             and s["attributes"].get("swamp.status_code") == 404)
    assert request["parent_id"] is None  # not under the long-lived `swamp serve` span
    assert request["status"]["status_code"] == "ERROR"
    assert request["attributes"]["swamp.error_code"] == "not_found"


def test_a_bad_traceparent_header_is_ignored(served):
    reply = served.get("/api/v1/models/hello", headers={"traceparent": "00-zz-bad-01"})
    assert reply.status == 200
    request = _wait_for_span(served, lambda s: s["name"] == "swamp.serve.request"
                             and s["attributes"]["swamp.op"] == "getModel")
    assert request["parent_id"] is None


def test_swamp_server_carries_the_callers_trace_to_the_server(served, tmp_path):
    # The client's tracing is off: the TRACEPARENT it was given travels on unchanged.
    r = cli(None, "--server", served.url, "model", "method", "run", "hello", "execute",
            env={"TRACEPARENT": "00-1" + CALLER_TRACE[1:] + "-" + CALLER_SPAN + "-01"}, cwd=tmp_path)
    assert r.code == 0, r.stderr
    request = _wait_for_span(served, lambda s: s["name"] == "swamp.serve.request"
                             and s["context"]["trace_id"] == "0x1" + CALLER_TRACE[1:])
    assert request["parent_id"] == "0x" + CALLER_SPAN
