"""Pull, push, deletes and checkpoints between two peers (S1, S2, S4)."""

from __future__ import annotations

import json

import pytest

from swamp.datastore.sync import SyncEngine
from swamp.errors import SyncConflictError
from swamp.repo.datastores import path_rules

from .conftest import delete, files, read, write


def test_pull_then_push_sends_nothing_and_noop_sync_is_one_request(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    for i in range(20):
        write(a, f"definitions-evaluated/m{i}.yaml", f"n: {i}\n" * (i + 1))
    pushed = a.push("seed")
    assert pushed.filesPushed == 20 and pushed.head == 1

    pulled = b.pull()
    assert pulled.filesPulled == 20 and pulled.bytesPulled == pushed.bytesPushed
    assert files(b) == files(a)

    after = b.push()
    assert (after.filesPushed, after.bytesPushed, after.requests) == (0, 0, 0)
    # Even a full walk (journal lost) finds nothing to send: status is by content, not mtime.
    walked = b.push(full_walk=True)
    assert (walked.filesPushed, walked.bytesPushed, walked.requests) == (0, 0, 0)

    before = len(store.requests)
    noop = b.sync()
    assert noop.requests == 1 and len(store.requests) - before == 1
    assert store.requests[-1][0] == "LIST"
    assert noop.to_json() == {"filesPulled": 0, "filesPushed": 0, "filesDeleted": 0, "bytesPulled": 0,
                              "bytesPushed": 0, "requests": 1, "conflicts": [], "head": 1}


def test_a_fresh_peer_on_an_empty_remote_makes_one_request(make_peer, store):
    assert make_peer("a").sync().requests == 1


def test_identical_content_is_uploaded_once(make_peer):
    a = make_peer("a")
    for i in range(5):
        write(a, f"files/copy{i}", b"same bytes")
    c = a.push()
    assert c.filesPushed == 5 and c.bytesPushed == len(b"same bytes")


def test_unchanged_files_are_not_rehashed(make_peer, monkeypatch):
    a = make_peer("a")
    write(a, "files/big", b"x" * 100_000)
    a.push()
    # Make the stat cache entry old enough to be trusted, then count hashes.
    a.state._q("UPDATE stat SET checked_ns = checked_ns + 10000000000")
    hashed = []
    orig = a.tree._hash
    monkeypatch.setattr(a.tree, "_hash", lambda rel, path: hashed.append(rel) or orig(rel, path))
    assert a.push(full_walk=True).filesPushed == 0
    assert hashed == []


def test_changes_and_deletes_propagate_and_are_never_resurrected(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "data/acme-x/m1/count/1/raw", b"1")
    write(a, "data/acme-x/m1/count/1/metadata.yaml", b"version: 1\n")
    write(a, "audit/log.jsonl", b"{}\n")
    a.push()
    b.pull()
    assert read(b, "data/acme-x/m1/count/1/raw") == b"1"

    # a deletes (data gc); b has the files and a stale view
    delete(a, "data/acme-x/m1/count/1/raw")
    delete(a, "data/acme-x/m1/count/1/metadata.yaml")
    assert a.push("data gc").filesDeleted == 2
    # b changes something unrelated and pushes: the rebase must not bring the deleted files back
    write(b, "audit/log.jsonl", b"{}\n{}\n")
    b.sync()
    assert read(b, "data/acme-x/m1/count/1/raw") is None
    assert not (b.root / "data/acme-x/m1/count/1").exists(), "an empty version directory still looks like a version"
    # full walks on both sides, then more syncs: still gone
    for e in (a, b, a, b):
        e.push(full_walk=True)
        e.pull()
    assert read(a, "data/acme-x/m1/count/1/raw") is None and read(b, "data/acme-x/m1/count/1/raw") is None
    assert files(a) == files(b) == {"audit/log.jsonl": b"{}\n{}\n"}


def test_a_delete_can_be_undone_only_by_a_new_write_after_seeing_it(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/f", b"v1")
    a.push()
    b.pull()
    delete(a, "files/f")
    a.push()
    b.pull()
    assert read(b, "files/f") is None
    write(b, "files/f", b"v2")  # written anew after seeing the delete
    b.push()
    a.pull()
    assert read(a, "files/f") == b"v2"


def test_local_only_paths_never_leave_the_cache(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    for rel in ("secrets/local/v/key", "cache/catalog.db", ".locks/model%2Fa.lock", "files/.tmp-1.x",
                "files/f.conflict-a-3", "files/ok"):
        write(a, rel, b"x")
    a.push(full_walk=True)
    b.pull()
    assert files(b) == {"files/ok": b"x"}
    body = json.loads(store.get("default/log/00000000000000000001.json")[0])
    assert [c["path"] for c in body["changes"]] == ["files/ok"]


def test_namespaces_are_separate(make_peer, store):
    a, b = make_peer("a", namespace="team-a"), make_peer("b", namespace="team-b")
    write(a, "files/f", b"a")
    a.push()
    assert b.pull().filesPulled == 0
    assert all(k.startswith("team-a/") for k in store._objects)


def test_commit_record_shape(make_peer, store):
    a = make_peer("a")
    write(a, "files/f", b"abc")
    a.push("model method run")
    delete(a, "files/f")
    a.push("data delete")
    rec = json.loads(store.get("default/log/00000000000000000002.json")[0])
    assert rec["seq"] == 2 and rec["parent"] == 1 and rec["command"] == "data delete"
    assert set(rec["writer"]) == {"peer", "host", "pid"} and rec["writer"]["peer"] == "a"
    assert rec["changes"] == [{"path": "files/f", "op": "delete", "sha256": None, "size": 0}]


def test_new_peer_starts_from_the_newest_checkpoint(make_peer, store):
    a = make_peer("a", checkpoint_every=5)
    for i in range(12):
        write(a, f"files/f{i % 4}", f"v{i}".encode())
        a.push()
    assert [k for k in store._objects if "checkpoints/" in k] == [
        "default/checkpoints/00000000000000000005.json.gz", "default/checkpoints/00000000000000000010.json.gz"]
    store.requests.clear()
    b = make_peer("b")
    b.pull()
    fetched_logs = sorted(k for op, k in store.requests if op == "GET" and "/log/" in k)
    assert fetched_logs == ["default/log/00000000000000000011.json", "default/log/00000000000000000012.json"]
    assert files(b) == files(a)


def test_peer_behind_trimmed_log_rebases_from_checkpoint_keeping_local_changes(make_peer, store):
    a, b = make_peer("a", checkpoint_every=3), make_peer("b")
    write(a, "files/keep", b"k")
    write(a, "files/gone", b"g")
    a.push()
    b.pull()
    write(b, "files/mine", b"local edit")  # not pushed yet
    delete(a, "files/gone")
    a.push()
    write(a, "files/keep", b"k2")
    a.push()  # seq 3: checkpoint
    write(a, "files/new", b"n")
    a.push()
    for seq in (1, 2, 3):  # retention trimmed the log b needs
        store.delete(f"default/log/{seq:020d}.json")
    b.sync()
    a.pull()
    assert files(b) == files(a) == {"files/keep": b"k2", "files/new": b"n", "files/mine": b"local edit"}


def test_a_commit_with_a_hostile_path_is_not_applied(make_peer, store, tmp_path):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/ok", b"ok")
    a.push()
    sha = json.loads(store.get("default/log/00000000000000000001.json")[0])["changes"][0]["sha256"]
    evil = {"seq": 2, "parent": 1, "id": "x", "writer": {"peer": "evil"}, "time": "", "command": "",
            "changes": [{"path": p, "op": "put", "sha256": sha, "size": 2}
                        for p in ("../escape", "/abs", "a\\b", "nul\x00", "files/../../x", ".sync/state.db",
                                  "files/fine")]}
    store.put("default/log/00000000000000000002.json", json.dumps(evil).encode(), if_none_match=True)
    with pytest.raises(SyncConflictError) as err:  # reported; the safe part applied
        b.pull()
    assert len(err.value.counts.conflicts) == 6
    assert not (tmp_path / "escape").exists() and not (b.root.parent / "x").exists()
    assert files(b) == {"files/ok": b"ok", "files/fine": b"ok"}


def test_status_lists_dirty_files(make_peer):
    a = make_peer("a")
    write(a, "files/x", b"1")
    assert a.status()["dirtyFiles"] == ["files/x"]
    a.push()
    assert a.status()["dirtyFiles"] == []
    assert a.status()["head"] == 1


def test_engine_reopened_on_same_cache_keeps_state(make_peer, tmp_path, store):
    a = make_peer("a")
    write(a, "files/x", b"1")
    a.push()
    a.close()
    again = SyncEngine(store, tmp_path / "a", rules=path_rules())
    try:
        assert again.peer == "a" and again.status()["head"] == 1
        assert again.sync().requests == 1
    finally:
        again.close()
