"""A step waiting for its model's lease, to number and publish what its
method wrote, reacts to a cancel: two forEach items on one model whose
methods have ended, one waiting at the datastore's lease (held by another
process), the other behind it at this process's turn. A cancel of the run
ends both while the lease is still held: the run is recorded `cancelled`,
each item `failed` with "cancelled", its method run `cancelled`, and no
version of the model is published. A wait that runs out still says the
whole time it waited (datastore/sync/lease.py: the cancel ends the lease's own wait)."""

from __future__ import annotations

import json
import subprocess
import time

from tests.helpers import cli, init_repo, popen, write_shell, write_workflow
from tests.lease_holder import hold

def _repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    # Each item leaves a mark once its command has run: then it only waits to publish.
    write_shell(repo, "m", """
        type: command/shell
        name: m
        globalArguments:
          run: 'mkdir -p marks && mktemp marks/done.XXXXXX'
        """)
    write_workflow(repo, "w", """
        jobs:
          - name: j
            steps:
              - name: "each-${{ self.r }}"
                forEach: {item: r, in: "${{ ['a', 'b'] }}"}
                concurrency: 2
                task: {type: model_method, modelIdOrName: m, methodName: execute}
        """)
    return repo


def _hold(repo, release):
    return hold(repo, "m", release)


def _until(what: str, check, limit_s: float = 60):
    end = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < end, f"{what}: not within {limit_s} s"
        time.sleep(0.05)


def test_a_cancel_ends_items_waiting_for_their_models_lease_and_publishes_nothing(tmp_path):
    repo = _repo(tmp_path)
    release = tmp_path / "release"
    holder = _hold(repo, release)
    run = None
    try:
        # Without the cancel, the items would wait the whole ten minutes for the lease.
        run = popen(repo, "workflow", "run", "w", env={"SWAMP_LOCK_TIMEOUT_MS": "600000"})
        _until("both items' commands ran", lambda: len(list((repo / "marks").glob("done.*"))) == 2
               if (repo / "marks").is_dir() else False)
        cancel = cli(repo, "workflow", "cancel", "w")
        assert cancel.code == 0, cancel
        try:
            out, err = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError("the run did not end after its cancel while its items waited for the lease")
        assert holder.poll() is None and not release.exists()  # the lease was never let go meanwhile
        assert run.returncode == 1, err
        doc = json.loads(out)
        assert doc["status"] == "cancelled", doc
        items = {s["name"]: s for j in doc["jobs"] for s in j["steps"]}
        assert set(items) == {"each-a", "each-b"}
        assert [(s["status"], s["error"]) for s in items.values()] == [("failed", "cancelled")] * 2, items
        assert all(not s.get("dataArtifacts") for s in items.values())
    finally:
        release.touch()
        holder.wait(timeout=30)
        if run is not None and run.poll() is None:
            run.kill()
    record = cli(repo, "workflow", "history", "get", "w")
    assert record.data["status"] == "cancelled"
    outputs = cli(repo, "model", "output", "search", "m")
    assert sorted(o["status"] for o in outputs.data) == ["cancelled", "cancelled"], outputs
    versions = cli(repo, "data", "versions", "m", "result")
    assert versions.code != 0 or versions.data == [], versions  # nothing of the items was published


def test_a_wait_for_the_lease_that_runs_out_names_its_whole_length(tmp_path):
    repo = _repo(tmp_path)
    release = tmp_path / "release"
    holder = _hold(repo, release)
    try:
        r = cli(repo, "workflow", "run", "w", env={"SWAMP_LOCK_TIMEOUT_MS": "1500"})
    finally:
        release.touch()
        holder.wait(timeout=30)
    assert r.code == 1, r
    errors = [s["error"] for j in r.data["jobs"] for s in j["steps"]]
    assert errors and all(e.startswith("its data was not published: ") for e in errors), errors
    assert any("timed out after 1500 ms waiting for lease" in e for e in errors), errors


def test_items_waiting_for_a_lease_whose_holder_died_take_it_over_and_publish(tmp_path):
    """The wait is a series of tries: a holder that is gone is still noticed
    across them, and the lease taken over, as one long wait would."""
    repo = _repo(tmp_path)
    holder = _hold(repo, tmp_path / "never")
    run = popen(repo, "workflow", "run", "w", env={"SWAMP_LOCK_TIMEOUT_MS": "600000"})
    try:
        _until("both items' commands ran", lambda: len(list((repo / "marks").glob("done.*"))) == 2
               if (repo / "marks").is_dir() else False)
        holder.kill()  # gone without letting go of the lease
        holder.wait(timeout=30)
        out, err = run.communicate(timeout=120)
    finally:
        if holder.poll() is None:
            holder.kill()
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert json.loads(out)["status"] == "succeeded"
    versions = cli(repo, "data", "versions", "m", "result")
    assert sorted(v["version"] for v in versions.data) == [1, 2], versions
