"""Webhooks: a body signed with the shared secret starts the workflow with
the body as its inputs; an unsigned or wrongly signed one is 401 and runs
nothing; the secret is never in the audit log."""

from __future__ import annotations

import json
import textwrap
import time

from swamp.serve.webhooks import sign, signed_headers
from tests.helpers import cli, init_repo
from tests.serve.server import Serve

SECRET = "s3cr3t-webhook-key-0123456789"

GREET = """
name: greet
inputs:
  properties:
    who: {type: string}
  required: [who]
jobs:
  - name: main
    steps:
      - name: hello
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo ${{ inputs.who }}"}}
"""


def test_a_signed_webhook_runs_the_workflow_and_a_bad_one_runs_nothing(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-greet.yaml").write_text(textwrap.dedent(GREET).lstrip())
    refused = cli(repo, "serve", "--webhook", "gh=greet")
    assert refused.code == 2 and "SWAMP_WEBHOOK_GH_SECRET" in refused.error["error"]

    server = Serve(repo, "--auth-mode", "token", "--webhook", "gh=greet",
                   env={"SWAMP_WEBHOOK_GH_SECRET": SECRET})
    try:
        body = json.dumps({"who": "webhook-world"}).encode()
        headers = {"Content-Type": "application/json"}
        unsigned = server.request("POST", "/hooks/gh", raw=body, headers=headers)
        assert unsigned.status == 401 and unsigned.error["code"] == "unauthorized"
        wrong = server.request("POST", "/hooks/gh", raw=body,
                               headers={**headers, "X-Swamp-Signature-256": sign("not-the-secret", body, webhook="gh")})
        assert wrong.status == 401
        tampered = server.request("POST", "/hooks/gh", raw=body.replace(b"world", b"WORLD"),
                                  headers={**headers, "X-Swamp-Signature-256": sign(SECRET, body, webhook="gh")})
        assert tampered.status == 401
        assert server.request("POST", "/hooks/nope", raw=body, headers=headers).status == 404

        ok = server.request("POST", "/hooks/gh", raw=body,
                            headers={**headers, **signed_headers(SECRET, body, webhook="gh")})
        assert ok.status == 202 and ok.doc == {"webhook": "gh", "workflow": "greet", "accepted": True,
                                               "runId": ok.doc["runId"]}  # the run it started
        deadline = time.monotonic() + 30
        while True:
            history = cli(repo, "workflow", "history", "greet").data
            if history and history[0]["status"] not in ("running", "pending"):
                break
            assert time.monotonic() < deadline, history
            time.sleep(0.2)
        assert len(history) == 1 and history[0]["status"] == "succeeded"  # only the signed one ran
        got = cli(repo, "data", "get", "hello", "result").data
        assert got["content"]["stdout"].strip() == "webhook-world"
        audit = (repo / ".swamp" / "cache" / "serve" / "audit.jsonl").read_text()
        assert SECRET not in audit and "webhook:gh" in audit
    finally:
        server.stop()
