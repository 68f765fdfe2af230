"""`swamp workflow cancel` stops a step already running on this machine: its
process group is signalled (SIGTERM, then SIGKILL), the step is recorded
failed with "cancelled", nothing of it is published, and the run ends
cancelled without waiting for the step's command to finish. The cancel
comes from another process, or from another peer of a shared datastore."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.e2e.test_workflow_sessions import _shared_repo, _wait_for_running_run
from tests.helpers import cli, init_repo, ok, peer_from_git, popen, s3_setup_args

WORKFLOW = """\
name: seq
jobs:
  - name: j
    steps:
      - {name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
      - name: s2
        dependsOn: [{step: s1}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
"""


def _sleeper(tmp_path: Path) -> tuple[str, Path, Path]:
    """A command that sleeps 60 s in a child of the shell (its pid in a
    file), unless the `quick` file exists."""
    pid_file, quick = tmp_path / "sleep.pid", tmp_path / "quick"
    run = f"if [ -f {quick} ]; then echo quick; else sleep 60 & echo $! > {pid_file}; wait; fi"
    return run, pid_file, quick


def _wait_for_pid(pid_file: Path, proc) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before its step started: {proc.communicate()}")
        time.sleep(0.1)
    raise AssertionError("the step never started its sleep")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (not reaped yet) is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, within: float = 30) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _versions(repo: Path, name: str) -> list[int]:
    r = cli(repo, "data", "versions", "hello", name)
    return [] if r.code else [v["version"] for v in r.data]


def _check_cancelled(out: str, code: int) -> dict:
    assert code == 1, out
    record = json.loads(out)
    assert record["status"] == "cancelled"
    steps = {s["name"]: s for j in record["jobs"] for s in j["steps"]}
    assert steps["s1"]["status"] == "failed"
    assert steps["s1"]["error"] == "cancelled"
    assert steps["s2"]["status"] == "pending"  # never started
    return record


def test_a_cancel_from_another_process_stops_the_running_step(tmp_path):
    repo = init_repo(tmp_path / "r")
    run, pid_file, quick = _sleeper(tmp_path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", f"run={run}")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-seq.yaml").write_text(WORKFLOW)

    runner = popen(repo, "workflow", "run", "seq")
    try:
        pid = _wait_for_pid(pid_file, runner)
        cancel = ok(repo, "workflow", "cancel", "seq")
        assert cancel["cancelRequested"] is True
        assert _wait_gone(pid), "the step's sleep still runs after the cancel"
        out, err = runner.communicate(timeout=60)  # the run ends: it did not wait out the sleep
    finally:
        if runner.poll() is None:
            runner.kill()
        if pid_file.exists() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), 9)
    record = _check_cancelled(out, runner.returncode)

    # The stored record says the same; the method run is recorded cancelled; no data of the step.
    stored = ok(repo, "workflow", "history", "get", record["id"])
    assert stored["status"] == "cancelled"
    outputs = ok(repo, "model", "output", "search", "hello")
    assert [o["status"] for o in outputs] == ["cancelled"]
    assert _versions(repo, "result") == [] and _versions(repo, "log") == []

    # The next run works, and numbers its versions from 1 (nothing was taken).
    quick.touch()
    again = ok(repo, "workflow", "run", "seq")
    assert again["status"] == "succeeded"
    assert _versions(repo, "result") == [1, 2] and _versions(repo, "log") == [1, 2]


@pytest.mark.slow
@pytest.mark.s3
def test_a_cancel_from_another_peer_stops_the_running_step(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    run, pid_file, quick = _sleeper(tmp_path)
    a = _shared_repo(tmp_path / "a", setup, run)
    (a / "workflows" / "workflow-seq.yaml").write_text(WORKFLOW)
    b = peer_from_git(a, tmp_path / "b")
    shutil.copytree(a / "workflows", b / "workflows", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *setup)

    runner = popen(a, "workflow", "run", "seq")
    try:
        pid = _wait_for_pid(pid_file, runner)
        run_id = _wait_for_running_run(b)
        cancel = ok(b, "workflow", "cancel", "seq", "--run", run_id)
        assert cancel["cancelRequested"] is True
        assert _wait_gone(pid), "the step's sleep still runs after the other peer's cancel"
        out, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
        if pid_file.exists() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), 9)
    _check_cancelled(out, runner.returncode)

    # The other peer sees the run cancelled, and no data of the step.
    stored = ok(b, "workflow", "history", "get", run_id)
    assert stored["status"] == "cancelled"
    assert _versions(b, "result") == [] and _versions(b, "log") == []

    # The next run (on the other peer this time) works; its versions start at 1.
    quick.touch()
    again = ok(b, "workflow", "run", "seq")
    assert again["status"] == "succeeded"
    assert _versions(b, "result") == [1, 2] and _versions(a, "result") == [1, 2]


def test_cancelling_a_run_stops_the_steps_of_the_nested_run_it_waits_on(tmp_path):
    repo = init_repo(tmp_path / "r")
    run, pid_file, _ = _sleeper(tmp_path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", f"run={run}")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-seq.yaml").write_text(WORKFLOW)
    (repo / "workflows" / "workflow-outer.yaml").write_text(
        "name: outer\njobs:\n  - name: o\n    steps:\n"
        "      - {name: inner, task: {type: workflow, workflowIdOrName: seq}}\n")

    runner = popen(repo, "workflow", "run", "outer")
    try:
        pid = _wait_for_pid(pid_file, runner)
        assert ok(repo, "workflow", "cancel", "outer")["cancelRequested"] is True
        assert _wait_gone(pid), "the nested run's sleep still runs after the cancel"
        out, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
        if pid_file.exists() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), 9)
    assert runner.returncode == 1, err
    outer = json.loads(out)
    assert outer["status"] == "cancelled"
    nested = ok(repo, "workflow", "history", "get", outer["jobs"][0]["steps"][0]["childRunId"])
    assert nested["status"] == "cancelled"
    assert {s["name"]: s.get("error") for j in nested["jobs"] for s in j["steps"]}["s1"] == "cancelled"
    assert _versions(repo, "result") == [] and _versions(repo, "log") == []



PATIENT_TYPE = '''
    import os
    import time

    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        flag: str = ""


    patient = ModelType("test/patient", version="2026.01.01.1", global_arguments=Args,
                        description="Writes a resource, then waits (no process) while FLAG.hold exists")
    patient.resource("note", lifetime="infinite")


    @patient.method(description="Write, then wait for the cancel (at most 60 s)")
    def work(args, ctx: Context) -> None:
        ctx.write_resource("note", "note", {"at": time.time()})
        open(args.flag, "w").close()
        deadline = time.time() + 60
        while os.path.exists(args.flag + ".hold") and not ctx.cancelled and time.time() < deadline:
            time.sleep(0.05)
'''


def test_a_method_without_a_process_sees_the_cancel_and_what_it_wrote_is_dropped(tmp_path):
    from tests.helpers import write_type

    repo = init_repo(tmp_path / "r")
    write_type(repo, "patient.py", PATIENT_TYPE)
    flag = tmp_path / "started"
    hold = tmp_path / "started.hold"
    hold.touch()
    ok(repo, "model", "create", "test/patient", "p", "--global-arg", f"flag={flag}")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-wait.yaml").write_text(
        "name: wait\njobs:\n  - name: j\n    steps:\n"
        "      - {name: s1, task: {type: model_method, modelIdOrName: p, methodName: work}}\n")

    runner = popen(repo, "workflow", "run", "wait")
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert time.monotonic() < deadline and runner.poll() is None, "the step never started"
            time.sleep(0.05)
        ok(repo, "workflow", "cancel", "wait")
        out, err = runner.communicate(timeout=50)  # well before the method's own 60 s
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 1, err
    record = json.loads(out)
    assert record["status"] == "cancelled"
    assert record["jobs"][0]["steps"][0]["error"] == "cancelled"
    r = cli(repo, "data", "versions", "p", "note")
    assert r.code != 0 or r.data == []  # the version it wrote is not there

    # The next run works. The cancelled step's version was staged, never numbered (docs/sync.md
    # "Concurrent runs of one model"): no number was taken, so the next run's is 1.
    hold.unlink()
    again = ok(repo, "workflow", "run", "wait")
    assert again["status"] == "succeeded"
    assert [v["version"] for v in ok(repo, "data", "versions", "p", "note")] == [1]
