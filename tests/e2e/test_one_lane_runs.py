"""A chain of steps on a shared datastore (app/one_lane_runs.py): the run's
end goes out in its last step's commit, and the model lease is kept along
the chain, while a peer still sees the run as it goes on."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo, ok, peer_from_git, popen, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _chain(s2: str = "true", s3: str = "true") -> str:
    def step(name: str, run: str, after: str | None) -> str:
        dep = f"\n        dependsOn: [{{step: {after}}}]" if after else ""
        return (f"      - name: {name}{dep}\n        task: {{type: model_method, modelIdOrName: hello, "
                f"methodName: execute, inputs: {{run: '{run}'}}}}\n")
    return "name: seq\njobs:\n  - name: j\n    steps:\n" + step("s1", "true", None) + step("s2", s2, "s1") \
        + step("s3", s3, "s2")


def _peers(tmp_path: Path, seaweedfs, workflow: str) -> tuple[Path, Path]:
    setup = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=true")
    (a / "workflows").mkdir(exist_ok=True)
    (a / "workflows" / "workflow-seq.yaml").write_text(workflow)
    ok(a, "datastore", "setup", *setup)
    b = peer_from_git(a, tmp_path / "b")
    shutil.copytree(a / "workflows", b / "workflows", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *setup)
    return a, b


def _run_commits(repo: Path, before: int) -> list[dict]:
    """The commits after seq ``before``, oldest first."""
    return sorted((c for c in ok(repo, "datastore", "log") if c["seq"] > before), key=lambda c: c["seq"])


def _head(repo: Path) -> int:
    return max((c["seq"] for c in ok(repo, "datastore", "log")), default=0)


def test_a_peer_sees_the_run_running_meanwhile_and_its_end_with_the_last_step(tmp_path, seaweedfs):
    a, b = _peers(tmp_path, seaweedfs, _chain(s2="sleep 4"))
    before = _head(a)
    runner = popen(a, "workflow", "run", "seq")
    try:
        seen = _wait_for(b, lambda r: r["status"] == "running"
                         and _steps(r) == {"s1": "succeeded", "s2": "pending", "s3": "pending"})
        assert seen["status"] == "running"  # while s2 is in flight, the peer sees s1 done (a step is published when it ends)
        out, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, err

    commits = _run_commits(a, before)
    assert [c["command"].rsplit(": ", 1)[-1] for c in commits[1:]] == ["j/s1", "j/s2", "j/s3"]
    assert len(commits) == 4  # the run's start, then one per step: its end rode with s3
    record = ok(b, "workflow", "history", "get", "seq")
    assert record["status"] == "succeeded" and record["completedAt"]
    assert _steps(record) == {"s1": "succeeded", "s2": "succeeded", "s3": "succeeded"}
    # Nothing is left held: the chain's model lease went with the run's.
    assert ok(a, "datastore", "lock", "status") == []
    assert ok(b, "model", "method", "run", "hello", "execute")["status"] == "succeeded"


def test_a_failed_last_step_ends_the_run_failed_in_the_same_commit(tmp_path, seaweedfs):
    a, b = _peers(tmp_path, seaweedfs, _chain(s3="false"))
    before = _head(a)
    r = cli(a, "workflow", "run", "seq")
    assert r.code == 1, r
    commits = _run_commits(a, before)
    assert len(commits) == 4 and commits[-1]["command"].endswith("j/s3")
    record = ok(b, "workflow", "history", "get", "seq")
    assert record["status"] == "failed" and record["failedStep"] == "j/s3"
    assert ok(a, "datastore", "lock", "status") == []


def test_steps_that_may_run_at_once_keep_a_session_each(tmp_path, seaweedfs):
    parallel = ("name: seq\njobs:\n  - name: j\n    steps:\n"
                "      - {name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute}}\n"
                "      - {name: s2, task: {type: model_method, modelIdOrName: hello, methodName: execute}}\n")
    a, b = _peers(tmp_path, seaweedfs, parallel)
    before = _head(a)
    assert ok(a, "workflow", "run", "seq")["status"] == "succeeded"
    assert len(_run_commits(a, before)) == 2 + 2  # the start, each step, the end: as before
    assert ok(b, "workflow", "history", "get", "seq")["status"] == "succeeded"


def _steps(record: dict) -> dict:
    return {s["name"]: s["status"] for j in record["jobs"] for s in j["steps"]}


def _wait_for(repo: Path, cond) -> dict:
    deadline = time.monotonic() + 60
    last = None
    while time.monotonic() < deadline:
        r = cli(repo, "workflow", "history", "get", "seq")
        if r.code == 0:
            last = r.data
            if cond(last):
                return last
        time.sleep(0.3)
    raise AssertionError(f"the peer never saw the run in that state; last seen: {last}")
