"""GET /workflows/NAME/runs (served from a kept index of the run records):
the same rows as `swamp workflow history`, a page at a time, filtered by
status, and fresh after new runs, also runs a peer made elsewhere."""

from __future__ import annotations

import textwrap

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

FLAKY = """
name: flaky
inputs:
  properties:
    code: {type: string, default: "0"}
jobs:
  - name: main
    steps:
      - name: go
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "exit ${{ inputs.code }}"}}
"""


def test_history_pages_match_the_command_line(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-flaky.yaml").write_text(textwrap.dedent(FLAKY).lstrip())
    for code in ("0", "1", "0", "0", "1", "0"):
        cli(repo, "workflow", "run", "flaky", "--input", f"code={code}")
    server = Serve(repo)
    try:
        everything = cli(repo, "workflow", "history", "flaky").data
        assert len(everything) == 6
        assert server.get("/api/v1/workflows/flaky/runs").doc == everything
        assert server.get("/api/v1/workflows/flaky/runs?offset=2&limit=3").doc == everything[2:5]
        failed = server.get("/api/v1/workflows/flaky/runs?status=failed").doc
        assert [r["id"] for r in failed] == [r["id"] for r in everything if r["status"] == "failed"]
        assert len(failed) == 2
        bad = server.get("/api/v1/workflows/flaky/runs?offset=-1")
        assert bad.status == 400 and bad.error["code"] == "validation"

        cli(repo, "workflow", "run", "flaky", "--input", "code=1")  # another process, after the index was built
        newest = server.get("/api/v1/workflows/flaky/runs?limit=1").doc
        assert newest == cli(repo, "workflow", "history", "flaky", "--limit", "1").data
        assert newest[0]["status"] == "failed" and newest[0]["id"] not in {r["id"] for r in everything}
    finally:
        server.stop()
