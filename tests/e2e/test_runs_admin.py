"""`swamp run history|gc|doctor` (issue 15): method and workflow runs
together, filtered; old run records and their logs collected by age and
count (never a run still going; --dry-run changes nothing); runs left
running by a process that is gone marked interrupted with the reason; bad
input and a datastore that is down are clear errors with nothing changed."""

from __future__ import annotations

import subprocess
import textwrap
import uuid

from tests.fixtures.faultproxy import FaultProxy
from tests.helpers import PYTHON, _env, cli, init_repo, ok, run_hello, snapshot

WF_ID = "6de03778-bb27-4169-9d2c-2c07e9fcdbba"


def _hello_repo(path):
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    return repo


def _workflow_run(repo, status: str, started: str, completed: str | None = None, *, name: str = "nightly",
                  host: str | None = None, pid: int | None = None) -> str:
    """A workflow run record as the engine writes it (with its log)."""
    from swamp.repo.context import Repo
    from swamp.workflows import records

    run_id = str(uuid.uuid4())
    run = records.WorkflowRun(id=run_id, workflowId=WF_ID, workflowName=name, status=status, startedAt=started,
                              completedAt=completed, host=host, pid=pid,
                              jobs=[records.JobRun(name="main", status="running" if status == "running" else
                                                   "succeeded", steps=[records.StepRun(
                                                       name="s", task="model_method", model="hello",
                                                       method="execute",
                                                       status="running" if status == "running" else "succeeded")])])
    records.write(Repo.open(repo).datastore, WF_ID, run_id, records.dump(run), "started\n")
    return run_id


def test_history_lists_method_and_workflow_runs_together_and_filters(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    run_hello(repo, "a")
    run_hello(repo, "b")
    old = _workflow_run(repo, "failed", "2020-01-01T00:00:00.000Z", "2020-01-01T00:01:00.000Z")
    rows = ok(repo, "run", "history")
    assert [r["kind"] for r in rows] == ["method", "method", "workflow"]  # newest first
    assert rows[-1]["id"] == old and rows[-1]["name"] == "nightly" and rows[-1]["status"] == "failed"
    assert {r["name"] for r in rows if r["kind"] == "method"} == {"hello.execute"}
    assert [r["id"] for r in ok(repo, "run", "history", "--kind", "workflow")] == [old]
    assert [r["id"] for r in ok(repo, "run", "history", "--status", "failed")] == [old]
    assert len(ok(repo, "run", "history", "--since", "1d")) == 2
    assert len(ok(repo, "run", "history", "--since", "2019-12-31T00:00:00Z")) == 3
    assert len(ok(repo, "run", "history", "--model", "hello")) == 3  # the workflow run has a step on hello
    assert [r["id"] for r in ok(repo, "run", "history", "--workflow", "nightly")] == [old]
    assert len(ok(repo, "run", "history", "--limit", "1")) == 1
    human = cli(repo, "run", "history", json=False)
    assert human.code == 0 and "hello.execute" in human.stdout and "nightly" in human.stdout


def test_history_bad_input(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    r = cli(repo, "run", "history", "--model", "helo")
    assert r.code == 1 and r.error["code"] == "not_found" and "hello" in r.error["hint"]
    r = cli(repo, "run", "history", "--workflow", "nope")
    assert r.code == 1 and r.error["code"] == "not_found"
    r = cli(repo, "run", "history", "--since", "yesterday")
    assert r.code == 2 and r.error["code"] == "usage"
    assert cli(repo, "run", "history", "--status", "bogus").code == 2
    assert cli(repo, "run", "history", "--limit", "0").code == 2


def test_gc_by_count_and_age_never_a_run_still_going(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    for i in range(3):
        run_hello(repo, f"v{i}")
    old_done = _workflow_run(repo, "succeeded", "2020-01-01T00:00:00.000Z", "2020-01-01T00:01:00.000Z")
    old_going = _workflow_run(repo, "running", "2020-01-01T00:00:00.000Z")
    old_waiting = _workflow_run(repo, "suspended", "2020-01-01T00:00:00.000Z")
    before = snapshot(repo)

    dry = ok(repo, "run", "gc", "--older-than", "30d", "--keep", "1", "--dry-run")
    assert dry["dryRun"] and snapshot(repo) == before
    assert sorted((d["kind"], d["id"]) for d in dry["deleted"] if d["kind"] == "workflow") == [("workflow", old_done)]
    assert sum(d["kind"] == "method" for d in dry["deleted"]) == 2  # beyond the newest 1 of hello.execute
    assert dry["files"] == 6 and dry["bytes"] > 0  # each run: its record and its log

    done = ok(repo, "run", "gc", "--older-than", "30d", "--keep", "1")
    assert not done["dryRun"] and done["runs"] == 3 and done["files"] == dry["files"]
    left = ok(repo, "run", "history")
    assert sorted(r["id"] for r in left if r["kind"] == "workflow") == sorted([old_going, old_waiting])
    assert sum(r["kind"] == "method" for r in left) == 1
    assert not list((repo / ".swamp" / "workflow-runs" / WF_ID).glob(f"workflow-run-{old_done}.*"))
    assert len(list((repo / ".swamp" / "outputs").rglob("*.log"))) == 1
    assert ok(repo, "run", "gc", "--keep", "1")["runs"] == 0


def test_gc_bad_input_changes_nothing(tmp_path):
    repo = _hello_repo(tmp_path / "r")
    run_hello(repo, "a")
    before = snapshot(repo)
    r = cli(repo, "run", "gc")
    assert r.code == 2 and r.error["code"] == "usage" and "--older-than" in r.error["error"]
    r = cli(repo, "run", "gc", "--older-than", "soon")
    assert r.code == 1 and r.error["code"] == "validation"
    assert cli(repo, "run", "gc", "--keep", "-1").code == 2
    assert snapshot(repo) == before


def _die_holding_run(repo, run_id: str) -> int:
    code = textwrap.dedent(f"""
        import os, signal
        from swamp.repo.context import Repo
        repo = Repo.open({str(repo)!r})
        with repo.datastore.lock("workflow-run/{run_id}"):
            print(os.getpid(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert p.returncode == -9, p.stderr
    return int(p.stdout.strip())


def test_doctor_marks_runs_whose_process_is_gone_interrupted(tmp_path):
    from swamp.util.ids import hostname

    repo = _hello_repo(tmp_path / "r")
    killed = _workflow_run(repo, "running", "2026-01-01T00:00:00.000Z", host=hostname())
    pid = _die_holding_run(repo, killed)
    unleased = _workflow_run(repo, "running", "2026-01-02T00:00:00.000Z", host="elsewhere", pid=1)
    finished = _workflow_run(repo, "succeeded", "2026-01-03T00:00:00.000Z", "2026-01-03T00:00:01.000Z")
    before = snapshot(repo)

    dry = ok(repo, "run", "doctor", "--dry-run")
    assert sorted(o["runId"] for o in dry["orphaned"]) == sorted([killed, unleased])
    assert dry["marked"] == [] and snapshot(repo) == before
    why = {o["runId"]: o["reason"] for o in dry["orphaned"]}
    assert why[killed].startswith("interrupted:") and f"pid {pid}" in why[killed]
    assert "nothing holds its lease" in why[unleased]

    done = ok(repo, "run", "doctor")
    assert sorted(m["runId"] for m in done["marked"]) == sorted([killed, unleased])
    rows = {r["id"]: r for r in ok(repo, "run", "history", "--kind", "workflow")}
    assert rows[killed]["status"] == rows[unleased]["status"] == "interrupted"
    assert rows[finished]["status"] == "succeeded"
    assert ok(repo, "run", "doctor")["orphaned"] == []  # done once
    human = cli(repo, "run", "doctor", json=False)
    assert human.code == 0 and "no run is left running" in human.stdout


def test_a_datastore_that_is_down_is_a_clear_error(tmp_path, seaweedfs):
    repo = _hello_repo(tmp_path / "r")
    with FaultProxy(seaweedfs.endpoint_url) as proxy:
        ok(repo, "datastore", "setup", "s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
           "--endpoint-url", proxy.url, "--region", "us-east-1")
        run_hello(repo, "a")
        run_hello(repo, "b")
    before = snapshot(repo)
    for args in (["history"], ["gc", "--keep", "0"], ["doctor"]):
        r = cli(repo, "run", *args)
        assert r.code == 1 and "Traceback" not in r.stderr and r.error["error"], (args, r)
        assert snapshot(repo) == before, args
    assert len(ok(repo, "run", "history", "--offline")) == 2  # the local cache still answers


def test_gc_on_a_shared_datastore_is_published_to_peers(tmp_path, seaweedfs):
    from tests.helpers import peer_from_git, s3_setup_args

    args = s3_setup_args(seaweedfs)
    a = _hello_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *args)
    for i in range(3):
        run_hello(a, f"v{i}")
    old = _workflow_run(a, "failed", "2020-01-01T00:00:00.000Z", "2020-01-01T00:01:00.000Z")
    ok(a, "datastore", "sync")
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *args)
    assert len(ok(b, "run", "history")) == 4

    done = ok(a, "run", "gc", "--keep", "1")
    assert done["runs"] == 2 and done["sync"]["filesDeleted"] >= 4
    done = ok(a, "run", "gc", "--older-than", "1y")
    assert [d["id"] for d in done["deleted"]] == [old]
    left = ok(b, "run", "history")  # b pulls first
    assert [r["kind"] for r in left] == ["method"]
    assert ok(a, "datastore", "status")["dirtyFiles"] == 0
