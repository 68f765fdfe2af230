"""A run being resumed holds its lease from its claim to its end, and a run
marked interrupted by a peer is never saved over (app/workflows.py)."""

from __future__ import annotations

import pytest

from swamp.errors import ConflictError
from tests.helpers import init_repo, write_workflow

GATE = """
jobs:
  - name: main
    steps:
      - name: go
        task: {type: wait_for_signal}
"""


def _suspended(tmp_path):
    from swamp.app import signals, workflows
    from swamp.repo.context import Repo

    path = init_repo(tmp_path / "r")
    write_workflow(path, "gate", GATE)
    repo = Repo.open(path)
    run = workflows.run(repo, "gate", {}).run
    signals.signal(repo, "gate", "go", {"v": 1})
    return path, repo, run


def test_the_lease_is_held_between_the_claim_and_the_run(tmp_path, monkeypatch):
    from swamp.app import workflows
    from swamp.repo.context import Repo
    from swamp.workflows import engine, records

    path, repo, run = _suspended(tmp_path)
    seen: list = []
    prime = engine.Engine._prime

    def between_claim_and_execution(self):
        seen.append([l["name"] for l in Repo.open(path).datastore.lock_status()])
        return prime(self)

    monkeypatch.setattr(engine.Engine, "_prime", between_claim_and_execution)
    assert workflows.resume(repo, "gate", run.id, {}).run.status == "succeeded"
    assert records.run_lock(run.id) in seen[0]
    assert records.run_lock(run.id) not in [l["name"] for l in repo.datastore.lock_status()]  # let go at the end


def test_a_run_marked_interrupted_meanwhile_is_not_saved_over(tmp_path, monkeypatch):
    from swamp.app import workflows
    from swamp.repo.context import Repo
    from swamp.workflows import engine, records

    path, repo, run = _suspended(tmp_path)
    prime = engine.Engine._prime

    def a_peer_marks_it(self):
        # what `run doctor` on a peer records once it took a stale lease over
        ds = Repo.open(path).datastore
        stored = records.load(ds, run.workflowId, run.id)
        stored.status, stored.failureReason = "failed", "interrupted: the process running it stopped heartbeating"
        records.save(ds, stored)
        return prime(self)

    monkeypatch.setattr(engine.Engine, "_prime", a_peer_marks_it)
    with pytest.raises(ConflictError, match="recorded interrupted while it ran here"):
        workflows.resume(repo, "gate", run.id, {})
    stored = records.load(Repo.open(path).datastore, run.workflowId, run.id)
    assert (stored.status, stored.failureReason.split(":")[0]) == ("failed", "interrupted")
