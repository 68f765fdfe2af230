"""The model commands upstream's users reach for beyond create and run:
evaluate, edit, method describe, method history, output data."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, on_a_terminal


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    assert cli(r, "model", "create", "command/shell", "hi", "--global-arg", "run=echo hi").code == 0
    return r


def test_evaluate_shows_the_arguments_a_run_would_get(repo):
    (repo / "models" / "command" / "shell" / "hi.yaml").write_text(
        (repo / "models" / "command" / "shell" / "hi.yaml").read_text().replace(
            "run: echo hi", "run: echo ${{ self.name }}-${{ 1 + 2 }}"))
    r = cli(repo, "model", "evaluate", "hi")
    assert r.code == 0, r
    assert r.data["methods"]["execute"]["run"] == "echo hi-3"
    one = cli(repo, "model", "evaluate", "hi", "--method", "execute", "--input", "timeout=5")
    assert one.data["methods"]["execute"]["timeout"] == 5
    assert cli(repo, "model", "evaluate", "hi", "--input", "timeout=5").code == 2  # inputs need --method


def test_method_describe_and_history_and_output_data(repo):
    d = cli(repo, "model", "method", "describe", "hi", "execute").data
    assert d["description"] == "Run the command" and "run" in d["arguments"]["properties"]
    assert d["values"] == {"run": "echo hi"}
    assert cli(repo, "model", "method", "describe", "hi", "exectue").error["hint"] == "did you mean 'execute'?"
    rec = cli(repo, "model", "method", "run", "hi", "execute").data
    assert [h["id"] for h in cli(repo, "model", "method", "history", "search", "hi").data] == [rec["id"]]
    assert cli(repo, "model", "method", "history", "get", rec["id"]).data["id"] == rec["id"]
    assert "exit code 0" in cli(repo, "model", "method", "history", "logs", rec["id"]).data["log"]
    wrote = cli(repo, "model", "output", "data", rec["id"]).data
    assert sorted((w["name"], w["version"]) for w in wrote) == [("log", 1), ("result", 1)]


def test_edit_opens_the_editor_on_a_terminal_then_checks_the_file(repo, tmp_path):
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/echo hi/echo edited/' \"$1\"\n")
    editor.chmod(0o755)
    shown = on_a_terminal(["model", "edit", "hi", "--repo-dir", str(repo)], env={"EDITOR": str(editor)})
    assert "ok" in shown and "hi" in shown
    assert cli(repo, "model", "get", "hi").data["globalArguments"]["run"] == "echo edited"
    no_tty = cli(repo, "model", "edit", "hi", json=False)
    assert no_tty.code == 2 and "needs a terminal" in no_tty.stderr


@pytest.mark.parametrize("sigint", ["handled", "ignored"])
def test_cancel_stops_a_running_method_and_records_it_cancelled(repo, sigint):
    """Also a run that inherited SIGINT ignored: one started with `&` in a
    script, by nohup or by cron, which Ctrl-C at a terminal must not stop
    but 'model cancel' must."""
    import signal
    import time

    from tests.helpers import popen

    started = repo / "started"
    assert cli(repo, "model", "create", "command/shell", "slow", "--global-arg",
               f"run=touch {started}; sleep 30").code == 0
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint == "ignored" else None
    proc = popen(repo, "model", "method", "run", "slow", "execute", preexec_fn=ignore)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not started.exists():  # the method is running now
            time.sleep(0.1)
        r = cli(repo, "model", "cancel", "slow")
        assert r.code == 0 and r.data["cancelled"] is True, r
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130  # ended by the cancel (its command's own end, 30 s later, is 0)
    runs = cli(repo, "model", "output", "search", "slow").data
    assert [r["status"] for r in runs] == ["cancelled"]
    nothing = cli(repo, "model", "cancel", "slow")
    assert nothing.code == 1 and nothing.error["code"] == "not_found"


def test_cancel_never_signals_a_process_that_took_a_killed_runs_pid(repo):
    """A run killed without removing its marker leaves its pid to be reused:
    here the marker is made to name a live unrelated process, as the kernel
    could, and a cancel finds no run instead of signalling it."""
    import json
    import signal
    import subprocess
    import time

    from tests.helpers import popen

    started = repo / "started"
    assert cli(repo, "model", "create", "command/shell", "slow", "--global-arg",
               f"run=touch {started}; sleep 30").code == 0
    proc = popen(repo, "model", "method", "run", "slow", "execute")
    bystander = None
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not started.exists():
            time.sleep(0.1)
        bystander = subprocess.Popen(["sleep", "60"])  # started after the run, as a process reusing its pid would be
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        [marker] = (repo / ".swamp" / "cache" / "running").glob("*.json")
        doc = json.loads(marker.read_text())
        marker.write_text(json.dumps({**doc, "pid": bystander.pid}))  # the killed run's pid, now someone else's

        r = cli(repo, "model", "cancel", "slow")
        assert r.code == 1 and "no method run of model 'slow' is running here" in r.stderr, r
        assert bystander.poll() is None  # not signalled
        assert not marker.exists()  # the stale marker is dropped
    finally:
        if bystander is not None:
            bystander.kill()
            bystander.wait()
        if proc.poll() is None:
            proc.kill()
