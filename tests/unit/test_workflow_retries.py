"""Retries and timeouts of model_method steps (workflows/retries.py): a
step that fails twice then succeeds publishes its data once, a timeout
stops the step's processes, a step's own keys win over the workflow's
stepDefaults, and bad values are schema errors that say what is wrong."""

from __future__ import annotations

import os

import pytest

from tests.helpers import (cli, init_repo, on_a_terminal, run, steps, visible_versions, write_shell,
                           write_workflow)

#: a command that fails until it has run N times (its count kept in a file)
FLAKY = """
type: command/shell
name: {name}
globalArguments:
  run: 'n=$(cat {name}.count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {name}.count; echo "attempt $n"; [ $n -ge {succeed_at} ]'
"""

#: a command that writes its process id, then sleeps SECONDS
SLEEPER = """
type: command/shell
name: {name}
globalArguments:
  run: 'echo $$ > {name}.pid; sleep {seconds}'
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)  # the commands' count and pid files land here
    return repo


def _flaky(repo, name="flaky", succeed_at=3):
    write_shell(repo, name, FLAKY.format(name=name, succeed_at=succeed_at))


def _step(model, extra=""):
    return f"{{name: {model}, {extra}task: {{type: model_method, modelIdOrName: {model}, methodName: execute}}}}"


def _one_step(repo, step, wf_extra=""):
    write_workflow(repo, "w", f"""
        {wf_extra}
        jobs:
          - name: main
            steps:
              - {step}
    """)


def _versions(repo, model):
    return sorted((meta["name"], meta["version"]) for _, meta, _ in visible_versions(repo)
                  if meta["owner"]["definitionName"] == model)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie (exited, not yet reaped) is gone too
        return f.read().split()[2] != "Z"


def test_a_step_that_fails_twice_then_succeeds_is_recorded_attempt_by_attempt(repo):
    _flaky(repo)
    _one_step(repo, _step("flaky", "retries: 2, retryDelay: 0.1, "))
    r = run(repo, "w")
    s = steps(r)["main/flaky"]
    assert r.status == "succeeded" and s.status == "succeeded"
    assert (repo / "flaky.count").read_text().strip() == "3"  # it really ran three times
    assert (s.attempt, s.maxAttempts) == (3, 3)
    assert [(a.number, a.status) for a in s.attempts] == [(1, "failed"), (2, "failed"), (3, "succeeded")]
    assert all(a.error == "command exited with code 1" for a in s.attempts[:2])
    assert all(a.startedAt and a.completedAt and a.durationMs is not None and a.outputId for a in s.attempts)
    assert s.outputId == s.attempts[-1].outputId


def test_only_the_last_attempts_data_is_published(repo):
    _flaky(repo)
    _one_step(repo, _step("flaky", "retries: 2, "))
    run(repo, "w")
    # each attempt wrote its log; the failed attempts' were staged and dropped, never numbered
    # (docs/sync.md "Concurrent runs of one model"), so the last attempt's is version 1
    assert [v for v in _versions(repo, "flaky") if v[0] == "log"] == [("log", 1)]
    shown = cli(repo, "data", "versions", "flaky", "log")
    assert shown.code == 0 and [v["version"] for v in shown.data] == [1], shown


def test_a_step_that_runs_out_of_retries_fails_with_its_last_error(repo):
    _flaky(repo, succeed_at=9)
    _one_step(repo, _step("flaky", "retries: 1, "))
    r = run(repo, "w")
    s = steps(r)["main/flaky"]
    assert r.status == "failed" and s.error == "command exited with code 1"
    assert [(a.number, a.status) for a in s.attempts] == [(1, "failed"), (2, "failed")]
    assert (repo / "flaky.count").read_text().strip() == "2"
    assert [v for v in _versions(repo, "flaky") if v[0] == "log"] == [("log", 1)]  # the last one's kept


def test_a_timeout_stops_the_steps_process_and_fails_it(repo):
    write_shell(repo, "slow", SLEEPER.format(name="slow", seconds=30))
    _one_step(repo, _step("slow", "timeout: 1, "))
    r = run(repo, "w")
    s = steps(r)["main/slow"]
    assert r.status == "failed" and s.status == "failed"
    assert s.error == "timed out after 1 s" and r.failureReason == "timed out after 1 s"
    assert not _alive(int((repo / "slow.pid").read_text()))
    assert _versions(repo, "slow") == []  # nothing of a timed-out step is published


def test_retries_and_a_timeout_together(repo):
    # the first attempt sleeps past its timeout; the second is quick
    write_shell(repo, "late", """
        type: command/shell
        name: late
        globalArguments:
          run: 'if [ -f late.once ]; then echo done; else touch late.once; echo $$ > late.pid; sleep 30; fi'
    """)
    _one_step(repo, _step("late", "timeout: 1, retries: 1, retryDelay: 0, "))
    r = run(repo, "w")
    s = steps(r)["main/late"]
    assert r.status == "succeeded"
    assert [(a.status, a.error) for a in s.attempts] == [("failed", "timed out after 1 s"), ("succeeded", None)]
    assert not _alive(int((repo / "late.pid").read_text()))


def test_workflow_step_defaults_apply_unless_a_step_sets_its_own(repo):
    _flaky(repo, "a")
    _flaky(repo, "b")
    write_workflow(repo, "w", f"""
        stepDefaults: {{retries: 2, retryDelay: 0}}
        jobs:
          - name: main
            steps:
              - {_step("a")}
              - {_step("b", "retries: 0, ")}
    """)
    r = run(repo, "w")
    got = steps(r)
    assert got["main/a"].status == "succeeded" and len(got["main/a"].attempts) == 3
    assert got["main/b"].status == "failed" and got["main/b"].attempts == []  # its own 0 wins
    assert (repo / "b.count").read_text().strip() == "1"


def test_a_step_without_retries_records_as_before(repo):
    write_shell(repo, "plain", "type: command/shell\nname: plain\nglobalArguments: {run: 'echo hi'}\n")
    _one_step(repo, _step("plain"))
    s = steps(run(repo, "w"))["main/plain"]
    assert s.status == "succeeded" and s.attempt is None and "attempts" not in s.to_json()


def test_the_cli_table_and_history_get_show_the_attempts(repo):
    _flaky(repo)
    _one_step(repo, _step("flaky", "retries: 2, "))
    shown = cli(repo, "workflow", "run", "w", json=False)
    assert shown.code == 0, shown
    assert "succeeded (attempt 3/3)" in shown.stdout
    rid = cli(repo, "workflow", "history", "w").data[0]["id"]
    doc = cli(repo, "workflow", "history", "get", rid).data
    step = doc["jobs"][0]["steps"][0]
    assert step["attempt"] == 3 and [a["status"] for a in step["attempts"]] == ["failed", "failed", "succeeded"]


def test_a_terminal_sees_each_failed_attempt_and_the_next_one_start(repo):
    _flaky(repo)
    _one_step(repo, _step("flaky", "retries: 2, "))
    shown = on_a_terminal(["workflow", "run", "w", "--repo-dir", str(repo)], cwd=repo)
    assert "main/flaky attempt 1/3 failed: command exited with code 1; trying again" in shown, shown
    assert "main/flaky running (attempt 3/3)" in shown and "succeeded (attempt 3/3)" in shown, shown


@pytest.mark.parametrize("value, words", [
    ("retries: -1", "retries: must be from 0 to 100, not -1"),
    ("retries: three", "retries: must be a whole number of retries"),
    ("retries: true", "retries: must be a whole number of retries"),
    ("retryDelay: -2", "retryDelay: must be at least 0"),
    ("retryDelay: soon", "retryDelay: must be a number of seconds"),
    ("retryBackoff: 0.5", "retryBackoff: must be from 1"),
    ("timeout: 0", "timeout: must be more than 0"),
    ("timeout: '5'", "timeout: must be a number of seconds"),
])
def test_bad_values_are_schema_errors_that_say_what_is_wrong(repo, value, words):
    write_shell(repo, "plain", "type: command/shell\nname: plain\nglobalArguments: {run: 'echo hi'}\n")
    _one_step(repo, _step("plain", value + ", "))
    checked = cli(repo, "workflow", "validate", "w")
    assert checked.code == 1
    errors = checked.data["workflows"][0]["errors"]
    assert any(words in e for e in errors), errors
    assert not any("Value error" in e for e in errors)


def test_bad_step_defaults_are_schema_errors_too(repo):
    write_shell(repo, "plain", "type: command/shell\nname: plain\nglobalArguments: {run: 'echo hi'}\n")
    _one_step(repo, _step("plain"), wf_extra="stepDefaults: {retries: -3}")
    errors = cli(repo, "workflow", "validate", "w").data["workflows"][0]["errors"]
    assert any("stepDefaults.retries: must be from 0 to 100" in e for e in errors), errors


def test_retries_on_an_approval_step_are_refused_with_where_its_timeout_goes(repo):
    _one_step(repo, "{name: gate, timeout: 5, task: {type: manual_approval, prompt: 'ok'}}")
    errors = cli(repo, "workflow", "validate", "w").data["workflows"][0]["errors"]
    assert any("retries and timeouts are for model_method steps" in e and "task's timeout" in e
               for e in errors), errors


def test_history_get_shows_a_person_each_attempt(repo):
    _flaky(repo, succeed_at=9)
    _one_step(repo, _step("flaky", "retries: 1, "))
    run(repo, "w")
    rid = cli(repo, "workflow", "history", "w").data[0]["id"]
    shown = cli(repo, "workflow", "history", "get", rid, json=False)
    assert shown.code == 0, shown
    assert "failed at main/flaky: command exited with code 1" in shown.stdout
    assert "failed (attempt 2/2)" in shown.stdout and "attempts of main/flaky:" in shown.stdout
    assert "1. failed" in shown.stdout and "2. failed" in shown.stdout
    assert not shown.stdout.lstrip().startswith("{")  # a person's view; --json prints the record


def test_a_cancel_during_the_pause_before_a_retry_ends_the_step_there(repo):
    import threading
    import time

    from swamp.app import workflows
    from swamp.repo.context import Repo
    from swamp.workflows import records

    _flaky(repo, succeed_at=9)
    _one_step(repo, _step("flaky", "retries: 5, retryDelay: 600, "))
    done: dict = {}
    runner = threading.Thread(target=lambda: done.update(run=run(repo, "w")))
    runner.start()
    try:
        while True:  # until the first attempt failed and the step waits for its retry
            runs = records.all_runs(Repo.open(repo).datastore)
            if runs and runs[0].jobs[0].steps[0].attempts:
                break
            assert runner.is_alive(), done
            time.sleep(0.1)
        workflows.cancel(Repo.open(repo), "w", runs[0].id)
    finally:
        runner.join(120)
    r = done["run"]
    s = steps(r)["main/flaky"]
    assert r.status == "cancelled" and s.status == "failed" and s.error == "command exited with code 1"
    assert (repo / "flaky.count").read_text().strip() == "1"  # no attempt after the cancel


def test_the_junit_report_lists_a_retried_steps_attempts(repo, tmp_path):
    _flaky(repo)
    _one_step(repo, _step("flaky", "retries: 2, "))
    report = tmp_path / "junit.xml"
    assert cli(repo, "workflow", "run", "w", "--junit", str(report)).code == 0
    import xml.etree.ElementTree as ET

    case = ET.parse(report).getroot().find(".//testcase")
    assert case.find("failure") is None
    assert case.find("system-out").text.splitlines() == [
        "attempt 1/3: failed: command exited with code 1", "attempt 2/3: failed: command exited with code 1",
        "attempt 3/3: succeeded"]
