"""serve's run API gives a failed command's last lines of stderr as a field
of their own (``stderrTail``), beside the short error, in the method run's
record, the workflow run's step and in the run read back; a step's event
(the stream) carries it too."""

from __future__ import annotations

from tests.helpers import init_repo, write_shell, write_workflow
from tests.serve.server import Serve

API = "/api/v1"


def _boom_repo(tmp_path):
    """`boom`, a command that fails with a line on stderr, and `w`, a workflow of that one step."""
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
    return repo


def test_the_run_api_carries_the_stderr_tail_beside_the_error(tmp_path):
    repo = _boom_repo(tmp_path)
    write_shell(repo, "tag", """
        type: command/shell
        name: tag
        globalArguments:
          run: 'echo "<img src=x onerror=alert(1)>" >&2; exit 1'
        """)
    write_workflow(repo, "t", """
        jobs:
          - name: j
            steps:
              - name: s
                task: {type: model_method, modelIdOrName: tag, methodName: execute}
        """)
    server = Serve(repo, "--dashboard")
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
        import urllib.request

        with urllib.request.urlopen(f"{server.url}/ui/workflows/w/runs/{run.doc['id']}", timeout=60) as page:
            html = page.read().decode()
        assert 'data-role="stderr-tail">stderr: the disk is full</div>' in html  # the dashboard's run page
        tagged = server.post(f"{API}/workflows/t/run").doc
        with urllib.request.urlopen(f"{server.url}/ui/workflows/t/runs/{tagged['id']}", timeout=60) as page:
            html = page.read().decode()
        assert "<img src=x" not in html and "stderr: &lt;img src=x onerror=alert(1)&gt;" in html  # text, escaped
        failed = [d for ev, d in server.events(f"{API}/workflows/w/run", {})
                  if ev == "step" and d.get("status") == "failed"]
        assert [(d["error"], d["stderrTail"]) for d in failed] == [("command exited with code 3", "the disk is full")]
    finally:
        server.stop()


def test_the_remote_cli_shows_the_tail_and_a_refused_files_errors_as_the_local_one_does(tmp_path):
    from tests.helpers import cli

    repo = _boom_repo(tmp_path)
    write_workflow(repo, "bad", """
        jobs:
          - name: j
            steps:
              - name: a
                task: {type: model_method, modelIdOrName: boom}
              - name: b
                retries: -1
                task: {type: model_method, modelIdOrName: boom, methodName: execute}
        """)
    server = Serve(repo)
    try:
        remote = ("--server", server.url)
        human = cli(None, "model", "method", "run", "boom", "execute", *remote, json=False, cwd=tmp_path)
        assert human.code == 1
        assert "  error: command exited with code 3\n  stderr: the disk is full\n" in human.stdout, human
        refused = cli(None, "workflow", "run", "bad", *remote, cwd=tmp_path)
        local = cli(repo, "workflow", "run", "bad")
        assert refused.code == local.code == 1
        assert refused.error["errors"] == local.error["errors"] == [
            {"path": "jobs[0].steps[0].task", "message": "a model_method task needs methodName"},
            {"path": "jobs[0].steps[1].retries", "message": "must be from 0 to 100, not -1"}]
        ran = cli(None, "workflow", "run", "w", *remote, json=False, cwd=tmp_path)
        assert ran.code == 1 and "stderr of j/fail: the disk is full" in ran.stdout.splitlines(), ran
        text = cli(None, "workflow", "run", "bad", *remote, json=False, cwd=tmp_path)
        assert text.stderr.splitlines()[1:3] == ["  jobs[0].steps[0].task: a model_method task needs methodName",
                                                 "  jobs[0].steps[1].retries: must be from 0 to 100, not -1"], text
    finally:
        server.stop()
