"""Finding runs whose process is gone through their run lease, in one
process: a holder on another machine that stopped heartbeating is judged
after its ttl; a live holder is never touched; two markers mark once."""

from __future__ import annotations

import json

import pytest

from swamp.app import interrupted_runs
from swamp.datastore.sync import lease as leases
from swamp.repo.context import Repo
from swamp.util import clock
from swamp.workflows import records
from swamp.workflows.records import JobRun, StepRun, WorkflowRun
from tests.helpers import init_repo


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def watch_clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(leases.WATCH, "monotonic", fake)
    return fake


def _running(repo: Repo, run_id: str) -> WorkflowRun:
    run = WorkflowRun(id=run_id, workflowId="wf-1", workflowName="deploy", status="running",
                      startedAt=clock.isoformat(), host="elsewhere", pid=4242,
                      jobs=[JobRun(name="main", status="running",
                                   steps=[StepRun(name="apply", task="model_method", status="running")])])
    with repo.datastore.session(mutating=True):
        records.save(repo.datastore, run)
    return run


def _foreign_lease(repo: Repo, run_id: str, beat: str = "1") -> None:
    """The run's lease as a process on another machine holds it."""
    store, layout = repo.datastore._lease_store()
    store.put(layout.lease(records.run_lock(run_id)), json.dumps({
        "name": records.run_lock(run_id), "holder": "ops@elsewhere", "host": "elsewhere", "pid": 4242,
        "peer": "elsewhere", "nonce": "n1", "ttlMs": 30_000, "acquiredAt": "2026-11-30T00:00:00Z",
        "beat": beat}).encode())


def test_a_holder_elsewhere_that_stopped_heartbeating_is_interrupted_after_its_ttl(tmp_path, watch_clock):
    repo = Repo.open(init_repo(tmp_path / "r"))
    _running(repo, "run-dead")
    _foreign_lease(repo, "run-dead")
    assert interrupted_runs.find_orphaned_runs(repo) == []  # first look: it may be alive
    watch_clock.now += 31
    [orphan] = interrupted_runs.find_orphaned_runs(repo)
    assert orphan.run_id == "run-dead"
    assert "stopped heartbeating" in orphan.reason and "ops@elsewhere" in orphan.reason
    row = interrupted_runs.mark_interrupted(repo, orphan)
    assert row["status"] == "interrupted"
    again = interrupted_runs.mark_interrupted(repo, orphan)  # a peer marking it too: nothing to do
    assert again is None
    saved = records.load(repo.datastore, "wf-1", "run-dead")
    assert saved.status == "interrupted" and saved.failureReason.startswith("interrupted: ")
    assert saved.failedStep == "main/apply"
    assert [(s.status, s.error) for _, s in saved.steps()] == [("failed", "interrupted")]
    assert "interrupted" in records.read_log(repo.datastore, "wf-1", "run-dead")
    assert interrupted_runs.find_orphaned_runs(repo) == []  # its lease is released now


def test_a_holder_that_keeps_heartbeating_is_left_alone(tmp_path, watch_clock):
    repo = Repo.open(init_repo(tmp_path / "r"))
    _running(repo, "run-live")
    for beat in range(5):  # a heartbeat every 10 s rewrites the lease
        _foreign_lease(repo, "run-live", beat=str(beat))
        assert interrupted_runs.find_orphaned_runs(repo) == []
        watch_clock.now += 10
    assert records.load(repo.datastore, "wf-1", "run-live").status == "running"


def test_a_run_with_no_lease_is_found_only_when_asked(tmp_path, watch_clock):
    repo = Repo.open(init_repo(tmp_path / "r"))
    _running(repo, "run-bare")
    assert interrupted_runs.find_orphaned_runs(repo) == []
    [orphan] = interrupted_runs.find_orphaned_runs(repo, unleased=True)
    assert "nothing holds its lease" in orphan.reason
    assert interrupted_runs.reap(repo, unleased=True)[0]["runId"] == "run-bare"
