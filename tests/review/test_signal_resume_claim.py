"""Review (round after e212c4b): under serve, a signalled run resumes
exactly once across the replicas (app/signals.claim_resume, resume_ready).

Hole: a claim whose push fails returns False ("a claim whose push failed is
not a claim") but leaves its `resumed` marker in the replica's cache,
journaled. That replica's next look (`ready`) skips the run because the
marker exists locally, and its next push publishes the marker, after which
every replica skips it too: the run never resumes. One failed request at
the wrong moment strands a signalled run for ever."""

from __future__ import annotations

import pytest

from tests.review.shared import SwitchableStore, shared_repo

GATE = """
jobs:
  - name: main
    steps:
      - name: go
        task: {type: wait_for_signal}
"""


def test_a_signalled_run_resumes_once_even_after_a_claim_whose_push_failed(tmp_path):
    from swamp.app import signals, workflows

    store = SwitchableStore()
    a = shared_repo(tmp_path / "a", store, "replica-a", {"gate": GATE})
    b = shared_repo(tmp_path / "b", store, "replica-b", {"gate": GATE})
    try:
        run = workflows.run(a, "gate", {}).run
        assert run.status == "suspended"
        signals.signal(a, "gate", "go", {"version": "1.4.2"})

        resumed: list = []
        store.down = True  # replica a's claim is made, but its commit is not
        assert signals.resume_ready(a, by="replica-a", resume=resumed.append) == []
        store.down = False

        # The server answers again. Both replicas keep looking, as serve's
        # signal watch does, and replica a publishes what it has (any later
        # session of it does).
        signals.resume_ready(a, by="replica-a", resume=resumed.append)
        a.datastore.sync()
        signals.resume_ready(b, by="replica-b", resume=resumed.append)
        signals.resume_ready(a, by="replica-a", resume=resumed.append)

        assert [r.id for r in resumed] == [run.id]  # exactly once: today, never
    finally:
        a.datastore.engine.close()
        b.datastore.engine.close()


def test_a_claimed_resume_that_failed_before_claiming_the_run_is_tried_again(tmp_path):
    """The claimer's resume (serve/signal_watch.py: app.workflows.resume in
    a thread) can fail before it claims the run itself: its first pull
    meets a server that does not answer, say. It is logged, and the run
    stays suspended with its `resumed` marker published, which every
    replica's next look takes for "resumed": nobody tries again."""
    from swamp.app import signals, workflows
    from swamp.errors import TransientError

    store = SwitchableStore()
    a = shared_repo(tmp_path / "a", store, "replica-a", {"gate": GATE})
    try:
        run = workflows.run(a, "gate", {}).run
        signals.signal(a, "gate", "go", {"version": "1.4.2"})

        def resume_failing(r) -> None:
            raise TransientError("the datastore did not answer")  # logged by the signal watch

        with pytest.raises(TransientError):
            signals.resume_ready(a, by="replica-a", resume=resume_failing)
        resumed: list = []
        for _ in range(3):  # the watch looks again every second
            signals.resume_ready(a, by="replica-a", resume=resumed.append)
        assert [r.id for r in resumed] == [run.id]
    finally:
        a.datastore.engine.close()
