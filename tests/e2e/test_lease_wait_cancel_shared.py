"""On a shared datastore (SeaweedFS), a step whose method has ended waits
for its model's lease, held by another peer, to publish; a cancel of the run
ends that wait in the lease itself (datastore/sync/lease.py ``cancelled``):
the run ends `cancelled` while the peer still holds the lease, and nothing of
the step is published, on either peer. (A forEach item: a one-lane run, a
plain chain of steps, takes its model's lease before its first step runs,
app/one_lane_runs.py.)"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.e2e.lease_peers import assert_nothing_published, holding_m, two_peers
from tests.helpers import cli, popen

pytestmark = pytest.mark.slow


@pytest.fixture
def peers(tmp_path, seaweedfs):
    return two_peers(tmp_path, seaweedfs, "w", """
        jobs:
          - name: j
            steps:
              - name: "one-${{ self.r }}"
                forEach: {item: r, in: "${{ ['a'] }}"}
                task: {type: model_method, modelIdOrName: m, methodName: execute}
        """)


def test_a_cancel_ends_a_step_waiting_for_a_lease_another_peer_holds(peers, tmp_path):
    a, b = peers
    release = tmp_path / "release"
    run = None
    with holding_m(a, release) as holder:
        try:
            # Without the cancel, the step would wait the whole ten minutes for the lease.
            run = popen(b, "workflow", "run", "w", env={"SWAMP_LOCK_TIMEOUT_MS": "600000"})
            end = time.monotonic() + 60
            while not (b / "ran").exists():  # its method has ended: it only waits to publish
                assert time.monotonic() < end and run.poll() is None, "the step's command never ran"
                time.sleep(0.05)
            cancel = cli(b, "workflow", "cancel", "w")
            assert cancel.code == 0, cancel
            try:
                out, err = run.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                raise AssertionError("the run did not end after its cancel while its step waited for the lease")
            assert holder.poll() is None and not release.exists()  # the peer held the lease throughout
            assert run.returncode == 1, err
            doc = json.loads(out)
            assert doc["status"] == "cancelled", doc
            steps = [s for j in doc["jobs"] for s in j["steps"]]
            assert [(s["status"], s["error"]) for s in steps] == [("failed", "cancelled")], steps
        finally:
            if run is not None and run.poll() is None:
                run.kill()
    assert_nothing_published(b, a)
