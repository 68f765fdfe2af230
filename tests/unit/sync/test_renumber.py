"""A version of ours that was never published, whose number a peer
published first, is renumbered at our next sync: it moves to the next free
number, its metadata and the records naming it follow, the peer's version
stays as it is, and no conflict copy is left."""

from __future__ import annotations

import json

import yaml

from swamp.datastore.sync.localonly import is_conflict_copy

from .conftest import delete, files, read, write

V = "data/acme/counter/m1/result"
OUT = "outputs/acme/counter/m1/run"


def _version(e, v: int, who: str, output_id: str, run_id: str | None = None) -> None:
    owner = {"definitionId": "m1", "definitionName": "m", "modelType": "acme/counter", "methodName": "run",
             "outputId": output_id}
    if run_id:
        owner["workflowRunId"] = run_id
    write(e, f"{V}/{v}/raw", f"{who}'s result".encode())
    meta = {"id": f"id-{who}", "name": "result", "version": v, "owner": owner}
    write(e, f"{V}/{v}/metadata.yaml", yaml.safe_dump(meta).encode())
    rec = {"id": output_id, "dataArtifacts": [{"name": "result", "version": v, "kind": "resource"}]}
    write(e, f"{OUT}/20260101T000000000Z-{output_id}.yaml", yaml.safe_dump(rec).encode())


def _meta(e, v: int) -> dict:
    return yaml.safe_load(read(e, f"{V}/{v}/metadata.yaml"))


def test_our_unpublished_version_moves_above_the_peers_and_its_record_follows(make_peer):
    a, b = make_peer("a"), make_peer("b")
    _version(a, 1, "a", "out-a")  # a's push failed: not published
    _version(b, 1, "b", "out-b")
    b.push()

    counts = a.sync()
    assert counts.conflicts == []
    assert counts.to_json()["renumbered"] == [{"versions": V, "from": 1, "to": 2}]
    assert read(a, f"{V}/1/raw") == b"b's result" and _meta(a, 1)["id"] == "id-b"
    assert read(a, f"{V}/2/raw") == b"a's result" and _meta(a, 2)["version"] == 2
    rec = yaml.safe_load(read(a, f"{OUT}/20260101T000000000Z-out-a.yaml"))
    assert rec["dataArtifacts"][0]["version"] == 2
    assert not any(is_conflict_copy(p) for p in a.tree.walk())

    b.pull()
    assert files(b) == files(a)
    assert a.status()["dirtyFiles"] == [] and b.status()["dirtyFiles"] == []


def test_the_next_free_number_is_above_every_version_known(make_peer):
    a, b = make_peer("a"), make_peer("b")
    _version(a, 1, "a", "out-a")
    for v in (1, 2, 3):
        _version(b, v, f"b{v}", f"out-b{v}")
    b.push()
    a.sync()
    assert read(a, f"{V}/4/raw") == b"a's result" and _meta(a, 4)["version"] == 4
    assert [read(a, f"{V}/{v}/raw") for v in (1, 2, 3)] == [b"b1's result", b"b2's result", b"b3's result"]


def test_a_workflow_run_record_follows_its_step(make_peer):
    a, b = make_peer("a"), make_peer("b")
    run = {"id": "r1", "jobs": [{"name": "j", "steps": [
        {"name": "s", "outputId": "out-a", "dataArtifacts": [{"name": "result", "version": 1}]},
        {"name": "other", "outputId": "out-x", "dataArtifacts": [{"name": "result", "version": 1}]}]}]}
    write(a, "workflow-runs/w1/workflow-run-r1.yaml", json.dumps(run, indent=2).encode())
    _version(a, 1, "a", "out-a", run_id="r1")
    _version(b, 1, "b", "out-b")
    b.push()
    a.sync()
    doc = json.loads(read(a, "workflow-runs/w1/workflow-run-r1.yaml"))
    steps = doc["jobs"][0]["steps"]
    assert steps[0]["dataArtifacts"][0]["version"] == 2
    assert steps[1]["dataArtifacts"][0]["version"] == 1  # another step's artifact is not ours to move


def test_a_published_version_is_never_moved(make_peer):
    a, b = make_peer("a"), make_peer("b")
    _version(a, 1, "a", "out-a")
    a.push()
    b.pull()
    write(b, f"{V}/1/raw", b"b rewrote a published version")  # a bug: refused, both kept
    write(a, f"{V}/1/raw", b"a rewrote it too")
    a.push()
    counts = None
    try:
        b.pull()
    except Exception as e:  # SyncConflictError
        counts = e.counts
    assert counts is not None and counts.conflicts[0]["path"] == f"{V}/1/raw"
    assert read(b, f"{V}/2/raw") is None


def test_a_number_the_peer_published_and_deleted_since_is_still_taken(make_peer):
    a, b = make_peer("a"), make_peer("b")
    _version(a, 1, "a", "out-a")
    _version(b, 1, "b", "out-b")
    b.push()
    delete(b, f"{V}/1/raw")
    delete(b, f"{V}/1/metadata.yaml")
    write(b, f"{V}/1/tombstone", b"")  # the number is never given out again
    b.push()

    assert a.sync().conflicts == []
    assert read(a, f"{V}/2/raw") == b"a's result" and _meta(a, 2)["version"] == 2
    assert read(a, f"{V}/1/raw") is None and read(a, f"{V}/1/tombstone") == b""
    assert not any(is_conflict_copy(p) for p in a.tree.walk())
    b.pull()
    assert files(b) == files(a)


def test_our_later_unpublished_versions_move_with_it_so_our_latest_stays_latest(make_peer):
    a, b = make_peer("a"), make_peer("b")
    _version(a, 1, "a1", "out-a1")
    _version(a, 2, "a2", "out-a2")  # two runs whose pushes failed
    _version(b, 1, "b", "out-b")
    b.push()
    counts = a.sync()
    assert counts.conflicts == []
    # no number skipped: ours leave theirs as they move (highest first)
    assert [read(a, f"{V}/{v}/raw") for v in (1, 2, 3)] == [b"b's result", b"a1's result", b"a2's result"]
    assert read(a, f"{V}/4/raw") is None
    assert [_meta(a, v)["version"] for v in (2, 3)] == [2, 3]
    assert yaml.safe_load(read(a, f"{OUT}/20260101T000000000Z-out-a1.yaml"))["dataArtifacts"][0]["version"] == 2
    assert yaml.safe_load(read(a, f"{OUT}/20260101T000000000Z-out-a2.yaml"))["dataArtifacts"][0]["version"] == 3
    assert sorted((r["from"], r["to"]) for r in counts.to_json()["renumbered"]) == [(1, 2), (2, 3)]
    b.pull()
    assert files(b) == files(a)
