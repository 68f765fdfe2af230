"""A serve replica of a repository whose config is managed (kept in the
shared datastore) picks up a definition and a workflow a CLI peer created
after the server started, without a restart or a git round-trip."""

from __future__ import annotations

import pytest

from tests.helpers import init_repo, ok, s3_setup_args
from tests.serve.server import Serve

pytestmark = [pytest.mark.slow, pytest.mark.s3]

WORKFLOW = """\
name: later
jobs:
  - name: j
    steps:
      - {name: s1, task: {type: model_method, modelIdOrName: fresh, methodName: execute}}
"""


def test_a_replica_sees_and_runs_what_a_cli_peer_created_after_it_started(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    replica = init_repo(tmp_path / "replica")
    ok(replica, "datastore", "setup", *setup)
    ok(replica, "datastore", "config", "migrate")
    server = Serve(replica)
    try:
        assert server.get("/api/v1/models").doc == []
        peer = init_repo(tmp_path / "peer")
        (peer / "workflows").mkdir(exist_ok=True)
        (peer / "workflows" / "workflow-later.yaml").write_text(WORKFLOW)
        ok(peer, "datastore", "setup", *setup)
        ok(peer, "datastore", "config", "migrate")  # publishes its workflow
        ok(peer, "model", "create", "command/shell", "fresh", "--global-arg", "run=echo from-a-peer")

        assert [m["name"] for m in server.get("/api/v1/models").doc] == ["fresh"]
        run = server.post("/api/v1/models/fresh/methods/execute/run", {})
        assert run.status == 200, run
        assert "from-a-peer" in ok(peer, "data", "get", "fresh", "result")["content"]["stdout"]
        wf = server.post("/api/v1/workflows/later/run", {})
        assert wf.status == 200 and wf.doc["status"] == "succeeded", wf
    finally:
        server.stop()
