"""Review (round after e212c4b): a LIVE run must never be marked
interrupted (app/interrupted_runs.py, `swamp run doctor`).

Hole: `workflow resume` claims the run in one session under the run's
lease (records it `running`, app/workflows._Host.claim), releases the
lease, and only then takes it again to execute (run_loop.Execution.go ->
host.holding). In between, the run is recorded running and nothing holds
its lease, which is exactly what `run doctor` (find_orphaned_runs with
unleased=True) takes for an orphan: it takes the free lease and records the
run failed, "interrupted". The resumer then takes the lease, runs the
steps and writes its own record over the doctor's, so the peer's change is
also overwritten without a word. (A doctor on another machine needs only
its pull to land in that gap; here it runs in another thread at that
moment, on a directory datastore: the gap is in app/, not in the sync.)"""

from __future__ import annotations

import threading

from tests.helpers import init_repo, write_workflow

GATE = """
jobs:
  - name: main
    steps:
      - name: go
        task: {type: wait_for_signal}
"""


def test_run_doctor_never_marks_a_run_being_resumed(tmp_path, monkeypatch):
    from swamp.app import runs, signals, workflows
    from swamp.repo.context import Repo
    from swamp.workflows import engine, records

    path = init_repo(tmp_path / "r")
    write_workflow(path, "gate", GATE)
    repo = Repo.open(path)
    first = workflows.run(repo, "gate", {}).run
    signals.signal(repo, "gate", "go", {"v": 1})

    doctor: list[dict] = []
    prime = engine.Engine._prime

    def between_claim_and_execution(self):
        # `swamp run doctor` from elsewhere, at this moment
        if not doctor:
            t = threading.Thread(target=lambda: doctor.append(runs.doctor(Repo.open(path))))
            t.start()
            t.join()
        return prime(self)

    monkeypatch.setattr(engine.Engine, "_prime", between_claim_and_execution)
    done = workflows.resume(repo, "gate", first.id, {}).run

    assert done.status == "succeeded"
    assert doctor[0]["marked"] == [], doctor[0]  # the run was alive: today it is marked interrupted
    assert records.load(Repo.open(path).datastore, done.workflowId, done.id).status == "succeeded"
