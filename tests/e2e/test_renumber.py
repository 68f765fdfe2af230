"""A run whose push failed keeps its output, and when a peer publishes the
same version number meanwhile, the next sync publishes ours under the next
free number: its data, its metadata and its run record all say so on every
peer, the peer's version stays as it is, latest never goes back, and no
conflict copy is left. Through the `swamp` command, against SeaweedFS
behind a fault proxy."""

from __future__ import annotations

import pytest

from tests.fixtures.faultproxy import Fault
from tests.helpers import cli, ok

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _conflict_copies(repo) -> list[str]:
    return [str(p) for p in (repo / ".swamp").rglob("*.conflict-*")]


def test_a_run_whose_push_failed_is_published_as_the_next_version_after_a_peers(proxied):
    proxy, a, b = proxied
    proxy.fail_matching("PUT", "/log/", Fault("status", status=503))
    r = cli(a, "model", "method", "run", "hello", "execute", "--input", "run=echo from-a")
    assert r.code == 1 and r.error["code"] == "unpublished", r
    ours = r.data
    assert {x["name"]: x["version"] for x in ours["dataArtifacts"]} == {"log": 1, "result": 1}
    proxy.clear()

    theirs = ok(b, "model", "method", "run", "hello", "execute", "--input", "run=echo from-b")
    assert {x["name"]: x["version"] for x in theirs["dataArtifacts"]} == {"log": 1, "result": 1}

    synced = ok(a, "datastore", "sync")
    assert synced["conflicts"] == []
    assert sorted((r["versions"].rsplit("/", 1)[-1], r["from"], r["to"]) for r in synced["renumbered"]) == [
        ("log", 1, 2), ("result", 1, 2)]
    assert _conflict_copies(a) == []

    for peer in (a, b):
        got = ok(peer, "data", "get", "hello", "result")
        assert got["version"] == 2 and "from-a" in str(got), got  # latest: ours, above theirs
        one = ok(peer, "data", "get", "hello", "result", "--version", "1")
        assert "from-b" in str(one), one  # the peer's version is as it published it
        assert sorted(v["version"] for v in ok(peer, "data", "versions", "hello", "result")) == [1, 2]
        rec = ok(peer, "model", "output", "get", ours["id"])
        assert {x["name"]: x["version"] for x in rec["dataArtifacts"]} == {"log": 2, "result": 2}
        rec = ok(peer, "model", "output", "get", theirs["id"])
        assert {x["name"]: x["version"] for x in rec["dataArtifacts"]} == {"log": 1, "result": 1}
    assert _conflict_copies(b) == []
    assert ok(a, "datastore", "status")["dirtyFiles"] == 0
    assert ok(b, "datastore", "sync")["conflicts"] == []


ONE_STEP = """\
name: one
jobs:
  - name: j
    steps:
      - {name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute,
                          inputs: {run: echo from-a}}}
"""


def _run_record(repo, run) -> dict:
    import json

    path = repo / ".swamp" / "workflow-runs" / run["workflowId"] / f"workflow-run-{run['id']}.yaml"
    return json.loads(path.read_text())


def test_a_workflow_run_whose_push_failed_keeps_its_record_pointing_at_its_renumbered_data(proxied):
    proxy, a, b = proxied
    (a / "workflows").mkdir(exist_ok=True)
    (a / "workflows" / "workflow-one.yaml").write_text(ONE_STEP)
    proxy.fail_matching("PUT", "/log/", Fault("status", status=503))
    r = cli(a, "workflow", "run", "one")
    assert r.code == 1 and r.error["code"] == "unpublished", r
    run = r.data
    proxy.clear()
    ok(b, "model", "method", "run", "hello", "execute", "--input", "run=echo from-b")

    assert ok(a, "datastore", "sync")["conflicts"] == []
    ok(b, "datastore", "sync")
    for peer in (a, b):
        (step,) = _run_record(peer, run)["jobs"][0]["steps"]
        assert {x["name"]: x["version"] for x in step["dataArtifacts"]} == {"log": 2, "result": 2}
        assert "from-a" in str(ok(peer, "data", "get", "hello", "result", "--version", "2"))
    assert _conflict_copies(a) == [] and _conflict_copies(b) == []
