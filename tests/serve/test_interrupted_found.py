"""Interrupted runs found by themselves (issue 25, item 5): a CLI run
killed with SIGKILL shows in `swamp run history` as a run whose holder is
gone at once; a `swamp serve` on the repository records it `interrupted`
(a status of its own) within a few of its looks, and that status shows in
`run history`, `workflow history get` and the dashboard; `resume --from`
restarts it."""

from __future__ import annotations

import time

from tests.dashboard.http import Session, text_of
from tests.helpers import cli, init_repo, popen, write_workflow
from tests.serve.server import Serve

SLOW = """
jobs:
  - name: main
    steps:
      - {name: nap, task: {type: model_method, modelIdOrName: napper, methodName: execute}}
"""


def _wait(what: str, probe, limit_s: float = 60):
    end = time.monotonic() + limit_s
    while True:
        got = probe()
        if got:
            return got
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.3)


def test_a_killed_cli_run_shows_its_holder_gone_then_serve_records_it_interrupted(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "napper", "--global-arg", "run=sleep 30").code == 0
    write_workflow(repo, "slow", SLOW)
    proc = popen(repo, "workflow", "run", "slow")
    try:
        run_id = _wait("the run to be running", lambda: [
            r["id"] for r in cli(repo, "workflow", "history", "slow").data if r["status"] == "running"])[0]
        assert cli(repo, "run", "history").data[0].get("holderGone") is False  # alive: not gone
    finally:
        proc.kill()  # SIGKILL the process this test started: its lease stays, without a holder
        proc.wait()

    row = next(r for r in cli(repo, "run", "history").data if r["id"] == run_id)
    assert row["status"] == "running" and row["holderGone"] is True
    shown = cli(repo, "run", "history", json=False)
    assert "running (holder gone)" in shown.stdout and "swamp run doctor" in shown.stdout

    server = Serve(repo, "--dashboard", env={"SWAMP_SERVE_REAP_S": "1"})
    try:
        record = _wait("serve to record the run", lambda: (lambda d: d if d["status"] != "running" else None)(
            cli(repo, "workflow", "history", "get", run_id).data))
        assert record["status"] == "interrupted" and record["failureReason"].startswith("interrupted: ")
        status, page = Session(server).get(f"/ui/workflows/slow/runs/{run_id}")
        assert status == 200 and "interrupted" in text_of(page)
    finally:
        server.stop()
    assert [r["id"] for r in cli(repo, "run", "history", "--status", "interrupted").data] == [run_id]

    definition = repo / "models" / "command" / "shell" / "napper.yaml"  # a quick step this time
    definition.write_text(definition.read_text().replace("sleep 30", "echo again"))
    again = cli(repo, "workflow", "resume", "slow", "--run", run_id, "--from", "nap")
    assert again.code == 0 and again.data["status"] == "succeeded", again
