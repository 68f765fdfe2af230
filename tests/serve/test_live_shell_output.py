"""A command/shell run followed as server-sent events shows its command's
lines while the command still runs (not all at the end), each redacted as
every log line is; the run's own log and data are as before."""

from __future__ import annotations

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

# Waits (at most ~10 s) for the file the test writes on seeing the first line.
WAITS = ("echo first-line; i=0; while [ ! -f go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
         "[ -f go ] && echo second-line")


def test_a_shell_runs_lines_arrive_while_it_runs(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "live", "--global-arg", "run=true").code == 0
    server = Serve(repo)
    try:
        events = []
        for kind, data in server.events("/api/v1/models/live/methods/execute/run", {"inputs": {"run": WAITS}}):
            events.append((kind, data))
            if kind == "log" and data["line"] == "first-line":
                (repo / "go").write_text("")  # only now may the command go on
    finally:
        server.stop()
    lines = [d["line"] for k, d in events if k == "log"]
    assert lines.index("first-line") < lines.index("second-line"), lines
    kind, result = events[-1]
    assert kind == "result" and result["body"]["status"] == "succeeded", result
    # The live lines are not copied into the run's log: its data's log file holds the output.
    logs = cli(repo, "model", "output", "logs", result["body"]["id"]).stdout
    assert "first-line" not in logs
    content = cli(repo, "data", "get", "live", "result").data["content"]
    assert content["stdout"] == "first-line\nsecond-line"
