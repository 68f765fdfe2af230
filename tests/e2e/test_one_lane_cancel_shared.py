"""On a shared datastore (SeaweedFS), a plain chain of model_method steps (a
one-lane run, app/one_lane_runs.py) takes its model's lease before its
first step runs. While another peer holds that lease, `workflow cancel`
ends the run's wait at once: the run ends `cancelled`, its steps never ran,
nothing of it is published on either peer, and the peer's lease is left
as it was (still held by that peer)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from tests.e2e.lease_peers import assert_nothing_published, holding_m, two_peers
from tests.helpers import cli, ok, popen

pytestmark = [pytest.mark.slow, pytest.mark.s3]


@pytest.fixture
def peers(tmp_path, seaweedfs):
    return two_peers(tmp_path, seaweedfs, "chain", """
        jobs:
          - name: j
            steps:
              - name: s1
                task: {type: model_method, modelIdOrName: m, methodName: execute}
              - name: s2
                dependsOn: [{step: s1}]
                task: {type: model_method, modelIdOrName: m, methodName: execute}
        """)


def _cancel_once_running(repo, run: subprocess.Popen) -> None:
    """`workflow cancel` as soon as the run is recorded (its first step then
    waits for the model's lease: the chain takes it before the step runs)."""
    end = time.monotonic() + 60
    while True:
        assert run.poll() is None, "the run ended before it was cancelled"
        record = cli(repo, "workflow", "history", "get", "chain")
        if record.code == 0 and record.data["status"] == "running":
            break
        assert time.monotonic() < end, "the run was never recorded running"
        time.sleep(0.1)
    cancel = cli(repo, "workflow", "cancel", "chain")
    assert cancel.code == 0, cancel


def test_a_cancel_ends_a_chain_waiting_for_its_models_lease_held_by_a_peer(peers, tmp_path):
    a, b = peers
    release = tmp_path / "release"
    run = None
    with holding_m(b, release) as holder:
        try:
            # Without the cancel, the chain would wait the whole ten minutes for the lease.
            run = popen(a, "workflow", "run", "chain", env={"SWAMP_LOCK_TIMEOUT_MS": "600000"})
            _cancel_once_running(a, run)
            try:
                out, err = run.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                raise AssertionError("the chain did not end after its cancel while it waited for its model's lease")
            assert run.returncode == 1, err
            doc = json.loads(out)
            assert doc["status"] == "cancelled", doc
            steps = {s["name"]: (s["status"], s.get("error")) for j in doc["jobs"] for s in j["steps"]}
            assert steps["s1"] == ("failed", "cancelled"), steps
            assert steps["s2"][0] != "succeeded", steps
            assert not (a / "ran").exists()  # no step's method ran
            # The peer's lease was left alone: its holder still has it.
            assert holder.poll() is None and not release.exists()
            held = [lock["name"] for lock in ok(b, "datastore", "lock", "status")]
            assert any(name.startswith("model") for name in held), held
        finally:
            if run is not None and run.poll() is None:
                run.kill()
    assert_nothing_published(a, b)
    assert ok(b, "workflow", "history", "get", "chain")["status"] == "cancelled"  # the peer sees how it ended
