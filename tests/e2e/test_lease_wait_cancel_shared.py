"""On a shared datastore (SeaweedFS), a step whose method has ended waits
for its model's lease, held by another peer, to publish; a cancel of the run
ends that wait in the lease itself (datastore/sync/lease.py ``cancelled``):
the run ends `cancelled` while the peer still holds the lease, and nothing of
the step is published, on either peer. (A forEach item: a one-lane run, a
plain chain of steps, takes its model's lease before its first step runs,
app/one_lane_runs.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from tests.helpers import _env, cli, init_repo, ok, popen, s3_setup_args, write_shell, write_workflow

pytestmark = pytest.mark.slow

#: peer "a" holds model NAME's lease in a process of its own until the file RELEASE exists
HOLDER = textwrap.dedent('''
    import os, sys, time
    from swamp.repo.context import Repo
    from swamp.models.definitions import find_definition
    from swamp.models.leases import model_lock_name

    repo = Repo.open(sys.argv[1])
    d = find_definition(repo, sys.argv[2])[1]
    with repo.datastore.lock(model_lock_name(d.type, d.id)):
        print("held", flush=True)
        while not os.path.exists(sys.argv[3]):
            time.sleep(0.05)
''')


@pytest.fixture
def peers(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    write_shell(a, "m", """
        type: command/shell
        name: m
        globalArguments:
          run: 'touch ran'
        """)
    write_workflow(a, "w", """
        jobs:
          - name: j
            steps:
              - name: "one-${{ self.r }}"
                forEach: {item: r, in: "${{ ['a'] }}"}
                task: {type: model_method, modelIdOrName: m, methodName: execute}
        """)
    ok(a, "datastore", "setup", *args)
    b = init_repo(tmp_path / "b")
    for part in ("models", "workflows"):
        shutil.copytree(a / part, b / part, dirs_exist_ok=True)
    ok(b, "datastore", "setup", *args)
    return a, b


def test_a_cancel_ends_a_step_waiting_for_a_lease_another_peer_holds(peers, tmp_path):
    a, b = peers
    release = tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(a), "m", str(release)],
                              stdout=subprocess.PIPE, text=True, env=_env())
    run = None
    try:
        assert holder.stdout.readline().strip() == "held"
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
        release.touch()
        holder.wait(timeout=60)
        if run is not None and run.poll() is None:
            run.kill()
    for peer in (b, a):
        versions = cli(peer, "data", "versions", "m", "result")
        assert versions.code != 0 or versions.data == [], versions  # nothing of the step was published
