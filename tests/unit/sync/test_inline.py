"""Small contents travel inline in the commit record (commitlog.py): a push
of small files costs the commit's PUT and no blob PUTs, a pull no blob GETs,
and everything that reads contents (checkpoints after gc, lazy hydration,
merges, verify, old records) still finds them."""

from __future__ import annotations

import base64
import json

import pytest

from swamp.datastore.sync.commitlog import INLINE_MAX, INLINE_MAX_LAZY
from swamp.errors import SyncConflictError

from .conftest import delete, files, read, write

DOC = "config/shared.json"


def _record(store, seq: int) -> dict:
    return json.loads(store.get(f"default/log/{seq:020d}.json")[0])


def _blobs(store) -> list[str]:
    return [k for k in store._objects if "/blobs/" in k]


def test_small_files_cost_no_blob_requests(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    a.init_remote()
    write(a, "files/first", b"first")
    a.push("first")
    for i in range(6):
        write(a, f"outputs/m/run{i}.yaml", f"run: {i}\n".encode() * 20)
    pushed = a.push("step")
    assert pushed.filesPushed == 6 and _blobs(store) == []
    # the LIST that shows the log (and the remote) are still the ones this
    # cache stands on, and the commit's PUT: no blob PUT
    assert pushed.requests == 2
    assert pushed.bytesPushed == sum(len(f"run: {i}\n".encode() * 20) for i in range(6))
    pulled = b.pull()
    assert files(b) == files(a)
    # format, identity, LIST log, LIST checkpoints, the two records: no GET per file
    assert pulled.requests == 6
    assert pulled.bytesPulled == pushed.bytesPushed + len(b"first")
    assert b.push(full_walk=True).requests == 0  # S2


def test_large_files_lazy_contents_over_their_limit_and_those_past_the_total_are_blobs(
        make_peer, store, monkeypatch):
    from swamp.datastore.sync import transfers

    a, b = make_peer("a"), make_peer("b")
    middle = INLINE_MAX_LAZY + 1
    write(a, "files/big", b"x" * (INLINE_MAX + 1))
    write(a, "files/doc", b"d" * middle)  # inline: every pull takes it anyway
    write(a, "data/t/m/n/1/raw", b"r" * middle)  # a blob: a lazy cache fetches it only when read
    write(a, "files/small", b"y" * 10)
    a.push()
    entries = {c["path"]: c for c in _record(store, 1)["changes"]}
    assert [p for p, c in entries.items() if "data" in c] == ["files/doc", "files/small"]
    assert len(_blobs(store)) == 2
    monkeypatch.setattr(transfers, "INLINE_TOTAL", 25)
    for i in range(3):
        write(a, f"files/t{i}", bytes([65 + i]) * 10)
    a.push()
    assert sum("data" in c for c in _record(store, 2)["changes"]) == 2  # 10 + 10 fit in 25
    b.pull()
    assert files(b) == files(a)


def test_identical_contents_are_carried_once(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    for i in range(4):
        write(a, f"files/copy{i}", b"same")
    assert a.push().bytesPushed == 4
    assert sum("data" in c for c in _record(store, 1)["changes"]) == 1
    b.pull()
    assert files(b) == {f"files/copy{i}": b"same" for i in range(4)}


def test_a_tampered_inline_content_is_refused(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/f", b"good")
    a.push()
    key = "default/log/00000000000000000001.json"
    body = _record(store, 1)
    body["changes"][0]["data"] = base64.b64encode(b"evil").decode()
    store._objects[key] = (json.dumps(body).encode(), *store._objects[key][1:])
    with pytest.raises(Exception, match="does not match its hash"):
        b.pull()
    assert read(b, "files/f") is None
    report = a.verify()
    assert not report["ok"] and any("does not match its hash" in e for e in report["errors"])


def test_records_without_inline_contents_are_still_read(make_peer, store):
    old = make_peer("old", inline_max=0)  # writes records as a peer before this change did
    new = make_peer("new")
    write(old, "files/f", b"from an old peer")
    old.push()
    assert "data" not in _record(store, 1)["changes"][0]
    assert new.pull().filesPulled == 1 and read(new, "files/f") == b"from an old peer"


@pytest.fixture
def future():
    """Move the engine's clock forward (the memory store keeps real time)."""
    import time

    from swamp.util import clock

    offset = [0.0]
    clock.set_clock(lambda: time.time() + offset[0])
    yield lambda seconds: offset.__setitem__(0, offset[0] + seconds)
    clock.set_clock(None)


def test_inline_contents_survive_gc_through_the_checkpoint(make_peer, store, future):
    a = make_peer("a", checkpoint_every=3)
    write(a, "files/kept", b"written once, long ago")
    for i in range(5):
        write(a, f"files/f{i % 2}", f"v{i}".encode())
        a.push()
    future(40 * 86400)
    a.gc(retention_days=30, grace_s=0)
    assert f"default/log/{1:020d}.json" not in store._objects  # the commit that carried it is gone
    late = make_peer("late")
    late.pull()
    assert read(late, "files/kept") == b"written once, long ago"
    assert a.verify()["ok"]


def test_a_checkpoint_carries_inline_contents_up_to_its_cap_and_stores_the_rest_as_blobs(
        make_peer, store, future, monkeypatch):
    import gzip

    from swamp.datastore.sync import checkpoint_writer

    monkeypatch.setattr(checkpoint_writer, "CHECKPOINT_INLINE_TOTAL", 250)
    a = make_peer("a", checkpoint_every=2)
    for i in range(5):
        write(a, f"files/f{i}", bytes([65 + i]) * 100)
    a.push()
    assert _blobs(store) == []  # the commit carries them all
    write(a, "files/more", b"x")
    a.push()  # seq 2: the checkpoint
    body = json.loads(gzip.decompress(store.get("default/checkpoints/00000000000000000002.json.gz")[0]))
    carried = [p for p, entry in body["files"].items() if len(entry) > 2]
    assert len(carried) == 3 and len(_blobs(store)) == 3  # 100 + 100 + 1 bytes fit in 250
    write(a, "files/last", b"y")
    a.push()
    future(40 * 86400)
    a.gc(retention_days=30, grace_s=0)
    late = make_peer("late")
    late.pull()
    assert files(late) == files(a)
    assert a.verify()["ok"]
    assert a.push(full_walk=True).requests == 0


def test_a_merge_whose_inline_base_was_trimmed_keeps_both_and_is_not_stuck(make_peer, store, future):
    a, b = make_peer("a", checkpoint_every=3), make_peer("b")
    write(a, DOC, json.dumps({"x": 1}))
    a.push()
    b.pull()
    write(b, DOC, json.dumps({"x": 1, "b": 2}))  # b's change, not pushed for a long time
    write(a, DOC, json.dumps({"x": 1, "a": 1}))
    for i in range(6):
        write(a, f"files/f{i}", b"more")
        a.push()
    future(40 * 86400)
    a.gc(retention_days=30, grace_s=0)
    with pytest.raises(SyncConflictError) as err:
        b.sync()
    (conflict,) = err.value.counts.conflicts
    assert conflict["path"] == DOC and "no longer stored" in conflict["reason"]
    assert json.loads(read(b, DOC)) == {"x": 1, "a": 1}
    assert json.loads(read(b, conflict["savedAs"])) == {"x": 1, "b": 2}
    assert b.sync().conflicts == []  # not stuck


def test_lazy_hydration_writes_inline_contents_at_pull(make_peer, store):
    a, b = make_peer("a"), make_peer("b", hydration="lazy")
    write(a, "data/t/m/n/1/raw", b"small content")
    write(a, "data/t/m/n/1/metadata.yaml", b"version: 1\n")
    a.push()
    b.pull()
    assert read(b, "data/t/m/n/1/raw") == b"small content"  # already in hand: no read-time GET


def test_a_merge_whose_base_was_inline(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, DOC, json.dumps({"x": 1}))
    a.push()
    b.pull()
    write(a, DOC, json.dumps({"x": 1, "a": 1}))
    a.push()
    write(b, DOC, json.dumps({"x": 1, "b": 2}))
    b.sync()  # merges against the inline base, publishes the merge
    a.pull()
    assert json.loads(read(a, DOC)) == {"x": 1, "a": 1, "b": 2}


def test_a_conflict_on_an_immutable_path_with_inline_contents_keeps_both(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, "outputs/o.yaml", b"theirs")
    a.push()
    write(b, "outputs/o.yaml", b"ours")
    with pytest.raises(SyncConflictError) as err:
        b.sync()
    (conflict,) = err.value.counts.conflicts
    assert read(b, "outputs/o.yaml") == b"theirs" and read(b, conflict["savedAs"]) == b"ours"


def test_a_content_blocked_at_pull_is_written_from_its_record_on_read(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(b, "files/x/mine", b"a local file where a's file goes")
    write(a, "files/x", b"small")
    a.push()
    with pytest.raises(SyncConflictError):
        b.pull()  # a local directory is in the way
    delete(b, "files/x/mine")
    (b.root / "files/x").rmdir()  # as the datastore's delete prunes it
    assert b.hydrate("files/x") and read(b, "files/x") == b"small"
