"""A resume claim names its attempt (app/signals.py): a claim whose commit
landed stands whatever the session said after it, a claim whose claimer is
gone is claimed again, and another replica's live claim is left alone until
it has gone unresumed for CLAIM_TTL_S."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.review.shared import SwitchableStore, shared_repo

GATE = """
jobs:
  - name: main
    steps:
      - name: go
        task: {type: wait_for_signal}
"""


def _signalled(tmp_path, store, name="a"):
    from swamp.app import signals, workflows

    repo = shared_repo(tmp_path / name, store, f"replica-{name}", {"gate": GATE})
    run = workflows.run(repo, "gate", {}).run
    signals.signal(repo, "gate", "go", {"version": "1.4.2"})
    return repo, run


def _marker(repo, run):
    from swamp.workflows import records, signals

    fresh = records.load(repo.datastore, run.workflowId, run.id)
    step = fresh.job("main").steps[0]
    return signals.resumed_path(run.workflowId, run.id, "main", "go", step.signal.requestedAt)


def test_a_claim_whose_commit_landed_stands_though_the_session_then_failed(tmp_path, monkeypatch):
    from swamp.app import signals
    from swamp.errors import ConflictError

    store = SwitchableStore()
    a, run = _signalled(tmp_path, store)
    b = shared_repo(tmp_path / "b", store, "replica-b", {"gate": GATE})
    try:
        push = a.datastore._push

        def landed_then_conflict(counts, command):
            push(counts, command)
            if "resume" in command:
                raise ConflictError("injected: a conflict reported after the commit landed")

        monkeypatch.setattr(a.datastore, "_push", landed_then_conflict)
        resumed: list = []
        signals.resume_ready(a, by="replica-a", resume=resumed.append)
        monkeypatch.undo()
        signals.resume_ready(b, by="replica-b", resume=resumed.append)
        assert [r.id for r in resumed] == [run.id]  # once, by the replica whose commit landed
    finally:
        a.datastore.engine.close()
        b.datastore.engine.close()


def test_a_claim_whose_claimer_exited_is_claimed_again(tmp_path):
    from swamp.app import signals
    from swamp.datastore.locks import machine_identity
    from swamp.util.ids import hostname

    store = SwitchableStore()
    a, run = _signalled(tmp_path, store)
    try:
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
        marker = _marker(a, run)
        # a replica on this machine claimed the resume, then was killed before resuming
        a.datastore.write_bytes(marker, json.dumps({"runId": run.id, "by": "killed", "attempt": "x1",
                                                    "host": hostname(), "pid": int(gone.stdout),
                                                    "machine": machine_identity(os.getpid())}).encode())
        a.datastore.sync()
        resumed: list = []
        signals.resume_ready(a, by="replica-a", resume=resumed.append)
        assert [r.id for r in resumed] == [run.id]
    finally:
        a.datastore.engine.close()


def test_another_replicas_claim_stands_until_it_goes_stale(tmp_path, monkeypatch):
    from swamp.app import signals

    store = SwitchableStore()
    a, run = _signalled(tmp_path, store)
    try:
        marker = _marker(a, run)
        # a replica on another machine claimed it (alive, as far as anyone here can tell)
        a.datastore.write_bytes(marker, json.dumps({"runId": run.id, "by": "elsewhere", "attempt": "x2",
                                                    "host": "another-machine", "pid": 4242}).encode())
        a.datastore.sync()
        resumed: list = []
        signals.resume_ready(a, by="replica-a", resume=resumed.append)
        assert resumed == []  # its claim stands
        monkeypatch.setattr(signals, "CLAIM_TTL_S", 0.0)  # ... until watched unresumed for its whole ttl
        signals.resume_ready(a, by="replica-a", resume=resumed.append)
        assert [r.id for r in resumed] == [run.id]
    finally:
        a.datastore.engine.close()
