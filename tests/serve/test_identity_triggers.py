"""Who did it when nobody typed anything: a run a schedule fires records
``schedule:NAME``, a run a signed webhook delivery starts records
``webhook:NAME`` (and its steps' method runs say the same), never the
server's user; a delivery with a wrong signature starts nothing and is
recorded nowhere."""

from __future__ import annotations

import json
import time

from swamp.serve.webhooks import sign, signed_headers
from tests.helpers import cli, init_repo, write_workflow
from tests.serve.server import Serve

SECRET = "identity-webhook-secret-0123456789"

BEAT = """
jobs:
  - name: main
    steps:
      - name: one
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo beat"}}
"""


def _history(repo, name: str) -> list[dict]:
    got = cli(repo, "workflow", "history", name)
    assert got.code == 0, got
    return got.data


def _first_finished(repo, name: str, limit_s: float = 60) -> dict:
    end = time.monotonic() + limit_s
    while True:
        rows = [r for r in _history(repo, name) if r["status"] not in ("running", "pending")]
        if rows:
            return rows[-1]
        assert time.monotonic() < end, _history(repo, name)
        time.sleep(0.3)


def test_schedules_and_webhooks_record_their_own_names(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "beat", BEAT)
    write_workflow(repo, "hooked", BEAT)
    server = Serve(repo, "--auth-mode", "token", "--schedule", "nightly=beat@*/2 * * * * *",
                   "--webhook", "gh=hooked", env={"SWAMP_WEBHOOK_GH_SECRET": SECRET})
    try:
        body = json.dumps({}).encode()
        headers = {"Content-Type": "application/json"}
        forged = server.request("POST", "/hooks/gh", raw=body,
                                headers={**headers, "X-Swamp-Signature-256": sign("not-the-secret", body, webhook="gh")})
        assert forged.status == 401
        sent = server.request("POST", "/hooks/gh", raw=body, headers={**headers, **signed_headers(SECRET, body, webhook="gh")})
        assert sent.status == 202, sent.doc
        hooked = _first_finished(repo, "hooked")
        scheduled = _first_finished(repo, "beat")
    finally:
        server.stop()
    assert len(_history(repo, "hooked")) == 1  # the forged delivery ran nothing
    assert hooked["status"] == "succeeded" and hooked["initiatedBy"] == "webhook:gh"
    assert scheduled["status"] == "succeeded" and scheduled["initiatedBy"] == "schedule:nightly"
    for row, actor in ((hooked, "webhook:gh"), (scheduled, "schedule:nightly")):
        doc = cli(repo, "workflow", "history", "get", row["id"]).data
        assert doc["initiatedBy"] == actor
        output = doc["jobs"][0]["steps"][0]["outputId"]
        assert cli(repo, "model", "method", "history", "get", output).data["initiatedBy"] == actor
