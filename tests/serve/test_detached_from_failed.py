"""`"wait": false` with `"fromFailed"` is refused with a clear 400 (it is not
supported yet): the handler once named an error class it had not imported,
so the refusal came out as a 500 "internal error: NameError". Nothing runs."""

from __future__ import annotations

from tests.helpers import cli, init_repo, write_workflow
from tests.serve.server import Serve

API = "/api/v1"


def test_a_detached_rerun_from_failure_is_a_validation_error_and_starts_nothing(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "quick", """
        jobs:
          - name: main
            steps:
              - {name: hi, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
    """)
    server = Serve(repo)
    try:
        r = server.post(f"{API}/workflows/quick/run", {"wait": False, "fromFailed": "0000-any-run"})
        assert r.status == 400, r
        assert r.error["code"] == "validation" and "fromFailed" in r.error["error"], r
        assert "wait" in r.error["hint"], r
        runs = server.get(f"{API}/workflows/quick/runs")
        assert runs.status == 200 and runs.doc == [], runs
    finally:
        server.stop()
