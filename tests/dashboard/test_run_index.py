"""The runs page of a server that has indexed nothing yet (a first start
on a large history): page 1 lists exactly the newest runs, the same as once
every record is read, found by reading the newest record files first; the
counts per status follow once the index is complete. Also when the file
times say nothing (every record written at one moment, as after a fresh
pull), and when a record's file time trails its run's start a little
(peers whose clocks disagree)."""

from __future__ import annotations

import json
import os
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from tests.helpers import init_repo, run, write_workflow

FLOW = """
jobs:
  - name: main
    steps:
      - name: only
        task: {type: manual_approval, prompt: "ok?"}
"""
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _copies(repo, n: int, *, file_times: str) -> tuple[str, list[str]]:
    """n copies of a real run's record with start times a minute apart;
    their files' times: when each ended ("ended"), or all the same ("same")."""
    first = run(repo, "flow")
    directory = repo / ".swamp" / "workflow-runs" / first.workflowId
    template = json.loads((directory / f"workflow-run-{first.id}.yaml").read_text())
    (directory / f"workflow-run-{first.id}.yaml").unlink()
    ids = []
    statuses = ["succeeded", "succeeded", "failed", "cancelled"]
    for i in range(n):
        doc = dict(template, id=str(uuid.uuid4()), status=statuses[i % 4],
                   startedAt=(START + timedelta(minutes=i)).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
        path = directory / f"workflow-run-{doc['id']}.yaml"
        path.write_text(json.dumps(doc))
        t = (START + timedelta(minutes=i, seconds=30)).timestamp() if file_times == "ended" else 1.8e9
        os.utime(path, (t, t))
        ids.append(doc["id"])
    return first.workflowId, ids[::-1]  # newest first


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_workflow(r, "flow", FLOW)
    return r


@pytest.mark.parametrize("file_times", ["ended", "same"])
def test_the_first_page_lists_the_newest_runs_before_anything_is_indexed(repo, file_times):
    from swamp.app.dashboard_queries import workflow_runs
    from swamp.workflows.run_index import RunIndex
    from swamp.repo.context import Repo

    wid, newest_first = _copies(repo, 300, file_times=file_times)
    r = Repo.open(repo)
    index = RunIndex()
    index._scan_in_background = lambda ds, wid: None  # nothing indexed until the test says so
    page = workflow_runs(r, index, "flow", offset=0, limit=50)
    assert [row["id"] for row in page.rows] == newest_first[:50]
    assert page.total == 300
    page2 = workflow_runs(r, index, "flow", offset=50, limit=50)
    assert [row["id"] for row in page2.rows] == newest_first[50:100]
    # once every record is read: the same rows, and the counts per status
    complete = RunIndex()
    complete.rows(r.datastore, wid)
    full = workflow_runs(r, complete, "flow", offset=0, limit=50)
    assert [row["id"] for row in full.rows] == newest_first[:50]
    assert full.counts == {"succeeded": 150, "failed": 75, "cancelled": 75}
    if file_times == "same":  # the file times say nothing: every record was read, so the counts are known
        assert page.counts == full.counts
    else:
        assert page.counts is None  # still being indexed


def test_a_record_written_a_little_before_its_run_started_is_still_found(repo):
    """A peer whose clock runs ahead: the run started 'later' than its file."""
    from swamp.app.dashboard_queries import workflow_runs
    from swamp.workflows.run_index import RunIndex
    from swamp.repo.context import Repo

    wid, newest_first = _copies(repo, 200, file_times="ended")
    directory = repo / ".swamp" / "workflow-runs" / wid
    ahead = directory / f"workflow-run-{newest_first[120]}.yaml"
    doc = json.loads(ahead.read_text())
    doc["startedAt"] = (START + timedelta(minutes=500)).isoformat().replace("+00:00", "Z")
    ahead.write_text(json.dumps(doc))
    t = (START + timedelta(minutes=497)).timestamp()  # 3 minutes before it "started"
    os.utime(ahead, (t, t))
    index = RunIndex()
    index._scan_in_background = lambda ds, wid: None
    page = workflow_runs(Repo.open(repo), index, "flow", offset=0, limit=10)
    assert page.rows[0]["id"] == newest_first[120]


def test_the_background_scan_completes_the_counts(repo):
    from swamp.app.dashboard_queries import workflow_runs
    from swamp.workflows.run_index import RunIndex
    from swamp.repo.context import Repo

    _copies(repo, 120, file_times="ended")
    r = Repo.open(repo)
    index = RunIndex()
    page = workflow_runs(r, index, "flow", offset=0, limit=20)
    deadline = time.monotonic() + 30
    while page.counts is None and time.monotonic() < deadline:
        time.sleep(0.1)
        page = workflow_runs(r, index, "flow", offset=0, limit=20)
    assert page.counts == {"succeeded": 60, "failed": 30, "cancelled": 30}


def test_after_a_restart_the_kept_rows_give_the_counts_at_once(repo, monkeypatch):
    """Rows kept under cache/ since the last change: the first page after a
    restart is exact, counts included, without reading a record."""
    from swamp.app.dashboard_queries import workflow_runs
    from swamp.workflows import run_index
    from swamp.workflows.run_index import RunIndex
    from swamp.repo.context import Repo

    wid, newest_first = _copies(repo, 120, file_times="ended")
    r = Repo.open(repo)
    store = repo / ".swamp" / "cache" / "dashboard"
    RunIndex(store).rows(r.datastore, wid)  # the server before the restart
    assert (store / f"runs-{wid}.json").is_file()
    restarted = RunIndex(store)
    monkeypatch.setattr(run_index, "_read_row", lambda *a: pytest.fail("a record was read"))
    page = workflow_runs(r, restarted, "flow", offset=0, limit=20)
    assert [row["id"] for row in page.rows] == newest_first[:20]
    assert page.counts == {"succeeded": 60, "failed": 30, "cancelled": 30}
