"""The HTTP API through a real `swamp serve` process: round trips over the
use cases, errors as the command line's documents with their statuses, and
bad input refused with nothing written."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.helpers import cli, init_repo, snapshot
from tests.serve.server import Serve

API = "/api/v1"

GATED = """
name: gated
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo first"}}
      - name: gate
        dependsOn: [{step: first}]
        task: {type: manual_approval, prompt: "go on?"}
      - name: last
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo last"}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("api") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-gated.yaml").write_text(textwrap.dedent(GATED).lstrip())
    server = Serve(repo)
    yield server
    server.stop()


def test_health_and_openapi_list_every_route(served):
    health = served.get("/health")
    assert health.status == 200 and health.doc["status"] == "ok" and health.doc["authMode"] == "none"
    doc = served.get("/openapi.json").doc
    assert doc["openapi"].startswith("3.")
    ops = {op["operationId"] for path in doc["paths"].values() for op in path.values()}
    assert {"runMethod", "getData", "listData", "runWorkflow", "approveStep", "cancelWorkflow",
            "workflowHistory", "queryData", "datastoreStatus"} <= ops
    body = doc["paths"][f"{API}/models/{{model}}/methods/{{method}}/run"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["additionalProperties"] is False


def test_method_run_then_read_its_data_and_record(served):
    run = served.run_method("hello", "execute", {"run": "echo via-api"})
    assert run.status == 200 and run.doc["status"] == "succeeded"
    version = next(a["version"] for a in run.doc["dataArtifacts"] if a["name"] == "result")

    got = served.get(f"{API}/data/hello/result")
    assert got.status == 200 and got.doc["version"] == version
    assert got.doc["content"]["stdout"].strip() == "via-api"
    # the same document the command line prints
    local = cli(served.repo, "data", "get", "hello", "result")
    assert local.code == 0 and local.data == got.doc

    meta = served.get(f"{API}/data/hello/result?version={version}&content=false").doc
    assert meta["version"] == version and "content" not in meta
    names = {r["name"] for r in served.get(f"{API}/data?model=hello").doc}
    assert names == {"log", "result"}
    assert [v["version"] for v in served.get(f"{API}/data/hello/result/versions").doc][-1] == version
    assert served.post(f"{API}/data/query", {"predicate": f'name == "result" && version == {version}'}).doc

    record = served.get(f"{API}/outputs/{run.doc['id']}").doc
    assert record["id"] == run.doc["id"] and record["status"] == "succeeded"
    assert "exit code 0" in served.get(f"{API}/outputs/{run.doc['id']}/log").doc["log"]
    assert served.get(f"{API}/outputs?model=hello").doc[0]["id"] == run.doc["id"]
    assert served.get(f"{API}/models").doc[0]["name"] == "hello"
    assert served.get(f"{API}/models/hello").doc["type"] == "command/shell"
    assert served.get(f"{API}/datastore/status").doc["type"] == "filesystem"


def test_a_failed_method_is_a_record_with_status_failed(served):
    run = served.run_method("hello", "execute", {"run": "echo oops >&2; exit 3"})
    assert run.status == 200 and run.doc["status"] == "failed"


def test_errors_are_the_cli_document_with_a_status(served):
    missing = served.run_method("nope", "execute")
    assert missing.status == 404 and missing.error["code"] == "not_found"
    assert served.get(f"{API}/data/hello/nothing").status == 404
    assert served.get(f"{API}/no/such/route").error["code"] == "not_found"
    bad_input = served.run_method("hello", "execute", {"nonsense": 1})
    assert bad_input.status == 400 and bad_input.error["code"] == "validation"
    assert served.get(f"{API}/data?bogus=1").status == 400
    assert served.get(f"{API}/data/hello/result?version=x").status == 400


def _wait_finished(served, run_id: str, limit_s: float = 60) -> dict:
    import time

    end = time.monotonic() + limit_s
    while True:
        doc = served.get(f"{API}/workflows/gated/runs/{run_id}").doc
        if doc["status"] in ("succeeded", "failed", "cancelled"):
            return doc
        assert time.monotonic() < end, doc
        time.sleep(0.3)


def test_workflow_approve_resume_history_and_logs(served):
    run = served.post(f"{API}/workflows/gated/run")
    assert run.status == 200 and run.doc["status"] == "suspended"
    assert [w["step"] for w in run.doc["approvalRequired"]] == ["gate"]
    denied_step = served.post(f"{API}/workflows/gated/approve", {"step": "nope"})
    assert denied_step.status == 404
    approved = served.post(f"{API}/workflows/gated/approve", {"step": "gate", "reason": "fine"})
    assert approved.status == 200 and approved.doc["decision"] == "approved"
    assert approved.doc["resumed"] is True  # the server continues the run by itself
    _wait_finished(served, run.doc["id"])
    history = served.get(f"{API}/workflows/gated/runs").doc
    assert history[0]["id"] == run.doc["id"] and history[0]["status"] == "succeeded"
    latest = served.get(f"{API}/workflows/gated/runs/latest").doc
    assert latest["id"] == run.doc["id"]
    log = served.get(f"{API}/workflows/gated/runs/{run.doc['id']}/log").doc
    assert log["id"] == run.doc["id"] and isinstance(log["log"], str)

    second = served.post(f"{API}/workflows/gated/run").doc
    cancelled = served.post(f"{API}/workflows/gated/cancel", {"runId": second["id"]})
    assert cancelled.status == 200 and cancelled.doc["status"] == "cancelled"


def _oversized(served, path: str):
    """A body announced over the limit: refused from its headers, before the
    body is read (sent by hand: urllib would fail writing the refused body)."""
    import http.client

    from tests.serve.server import Reply

    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        conn.putrequest("POST", path)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(2 * 1024 * 1024))
        conn.endheaders()
        r = conn.getresponse()
        return Reply(r.status, json.loads(r.read()), dict(r.headers))
    finally:
        conn.close()


def test_bad_requests_are_refused_and_write_nothing(served):
    before = snapshot(served.repo / ".swamp" / "data")
    path = f"{API}/models/hello/methods/execute/run"
    cases = [
        served.request("POST", path, raw=b'{"inputs": {"run": "echo x"'),         # malformed JSON
        served.request("POST", path, raw=b'["not", "an", "object"]'),
        served.post(path, {"inputs": {"run": "echo x"}, "extra": True}),         # unknown field
        served.post(path, {"inputs": "echo x"}),                                 # wrong type
        _oversized(served, path),                                                # over the size limit
        served.post(f"{API}/models/..hello/methods/execute/run", {}),            # traversal names
        served.post(f"{API}/models/hello/methods/..%2F..%2Fetc/run", {}),
        served.get(f"{API}/data/hello/..%2F..%2F..%2Fsecrets"),
        served.get(f"{API}/data/hello/.hidden"),
    ]
    for reply in cases:
        assert 400 <= reply.status < 500, reply
        assert set(reply.error) <= {"error", "code", "hint"}
    assert cases[4].status == 413 and cases[4].error["code"] == "too_large"
    assert {c.error["code"] for c in cases[:4]} == {"validation"}
    assert snapshot(served.repo / ".swamp" / "data") == before


def test_cli_strings_are_coerced_like_input_key_value(served):
    inputs = {"run": "echo 3"}
    reply = served.post(f"{API}/models/hello/methods/execute/run", {"inputs": inputs, "cliStrings": [["run"]]})
    assert reply.status == 200 and reply.doc["status"] == "succeeded"
    bad = served.post(f"{API}/models/hello/methods/execute/run", {"inputs": inputs, "cliStrings": [["nope"]]})
    assert bad.status == 400


def test_the_stream_sends_accepted_first_then_logs_then_the_result(served):
    events = served.events(f"{API}/models/hello/methods/execute/run",
                           {"inputs": {"run": "echo one; echo two"}})
    first = next(events)
    assert first == ("accepted", {"op": "runMethod", "model": "hello", "method": "execute"})
    rest = list(events)
    assert rest[-1][0] == "result" and rest[-1][1]["status"] == 200
    assert rest[-1][1]["body"]["status"] == "succeeded"
    assert any(e == "log" for e, _ in rest[:-1])

    steps = list(served.events(f"{API}/workflows/gated/run", {}))
    assert steps[0][0] == "accepted"
    assert ("first", "succeeded") in {(d["step"], d["status"]) for e, d in steps if e == "step"}
    assert steps[-1][1]["body"]["status"] == "suspended"
    served.post(f"{API}/workflows/gated/cancel", {"runId": steps[-1][1]["body"]["id"]})


def _self_signed(tmp_path):
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_https_with_a_certificate(tmp_path):
    cert, key = _self_signed(tmp_path)
    repo = init_repo(tmp_path / "repo")
    server = Serve(repo, "--cert-file", str(cert), "--key-file", str(key), ca_file=cert)
    try:
        assert server.url.startswith("https://")
        assert server.get("/health").doc["status"] == "ok"
        assert server.get(f"{API}/data").doc == []
    finally:
        server.stop()
    half = cli(repo, "serve", "--cert-file", str(cert))
    assert half.code == 2 and half.error["code"] == "usage"
