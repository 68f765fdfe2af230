"""A workflow run followed as server-sent events carries its steps' log
lines, each naming its step, between the step's running and done events."""

from __future__ import annotations

import textwrap

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

TWO = """
name: two
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo one"}}
      - name: second
        dependsOn: [{step: first}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "exit 3"}}
"""


def test_a_workflow_stream_carries_its_steps_logs(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-two.yaml").write_text(textwrap.dedent(TWO).lstrip())
    server = Serve(repo)
    try:
        events = list(server.events("/api/v1/workflows/two/run", {}))
    finally:
        server.stop()
    kinds = [k for k, _ in events]
    assert kinds[0] == "accepted" and kinds[-1] == "result"
    logs = [d for k, d in events if k == "log"]
    assert {d["step"] for d in logs} == {"first", "second"}, events
    assert all(d["job"] == "main" and d["runId"] and d["line"] for d in logs)
    assert any("exit code 3" in d["line"] for d in logs if d["step"] == "second"), logs
    order = [(k, d.get("step"), d.get("status")) for k, d in events if k in ("step", "log")]
    first_logs = [i for i, (k, s, _) in enumerate(order) if k == "log" and s == "first"]
    assert order.index(("step", "first", "running")) < min(first_logs) < order.index(("step", "first", "succeeded"))
