"""serve's run API gives a failed command's last lines of stderr as a field
of their own (``stderrTail``), beside the short error, in the method run's
record, the workflow run's step and in the run read back; a step's event
(the stream) carries it too."""

from __future__ import annotations

from tests.helpers import init_repo, write_shell, write_workflow
from tests.serve.server import Serve

API = "/api/v1"


def test_the_run_api_carries_the_stderr_tail_beside_the_error(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        globalArguments:
          run: 'echo "the disk is full" >&2; exit 3'
        """)
    write_workflow(repo, "w", """
        jobs:
          - name: j
            steps:
              - name: fail
                task: {type: model_method, modelIdOrName: boom, methodName: execute}
        """)
    server = Serve(repo)
    try:
        method = server.run_method("boom", "execute")
        assert method.doc["status"] == "failed", method.doc
        assert (method.doc["error"], method.doc["stderrTail"]) == ("command exited with code 3", "the disk is full")
        run = server.post(f"{API}/workflows/w/run")
        assert run.doc["status"] == "failed", run.doc
        step = run.doc["jobs"][0]["steps"][0]
        assert (step["error"], step["stderrTail"]) == ("command exited with code 3", "the disk is full")
        again = server.get(f"{API}/workflows/w/runs/{run.doc['id']}").doc
        assert again["jobs"][0]["steps"][0]["stderrTail"] == "the disk is full"
        assert again["failureStderrTail"] == "the disk is full"
        failed = [d for ev, d in server.events(f"{API}/workflows/w/run", {})
                  if ev == "step" and d.get("status") == "failed"]
        assert [(d["error"], d["stderrTail"]) for d in failed] == [("command exited with code 3", "the disk is full")]
    finally:
        server.stop()
