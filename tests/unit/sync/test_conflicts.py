"""Conflicts by path class (SYNC.md "Conflicts"): mergeable documents merge
per key, immutable paths refuse the second publisher, everything else keeps
both. Never last-writer-wins (S1, S3)."""

from __future__ import annotations

import json

import pytest

from swamp.errors import ConflictError, SyncConflictError

from .conftest import delete, files, read, write

LOCKFILE = "extensions/lockfile.json"


def _doc(e, rel=LOCKFILE) -> dict:
    return json.loads(read(e, rel))


def test_two_stale_peers_add_different_keys_to_a_mergeable_doc(make_peer, store):
    a, b, c = make_peer("a"), make_peer("b"), make_peer("c")
    write(a, LOCKFILE, json.dumps({"extensions": {"@x/base": {"version": "1"}}}))
    a.push()
    b.pull()
    # both edit from the same (soon stale) base, neither pulls before pushing
    write(a, LOCKFILE, json.dumps({"extensions": {"@x/base": {"version": "1"}, "@a/one": {"version": "1"}}}))
    write(b, LOCKFILE, json.dumps({"extensions": {"@x/base": {"version": "1"}, "@b/two": {"version": "2"}}}))
    a.push("extension pull @a/one")
    counts = b.push("extension pull @b/two")  # loses the race, merges, commits
    assert counts.conflicts == [] and counts.head == 3
    a.pull()
    c.pull()
    want = {"extensions": {"@x/base": {"version": "1"}, "@a/one": {"version": "1"}, "@b/two": {"version": "2"}}}
    assert _doc(a) == _doc(b) == _doc(c) == want


def test_both_peers_create_the_doc_from_nothing(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "config/shared.json", json.dumps({"a": 1}))
    write(b, "config/shared.json", json.dumps({"b": 2}))
    a.push()
    b.push()
    a.pull()
    assert _doc(a, "config/shared.json") == _doc(b, "config/shared.json") == {"a": 1, "b": 2}


def test_same_key_changed_differently_names_the_key_and_loses_nothing(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, LOCKFILE, json.dumps({"extensions": {"@x/e": {"version": "1"}}}))
    a.push()
    b.pull()
    write(a, LOCKFILE, json.dumps({"extensions": {"@x/e": {"version": "2"}}}))
    write(b, LOCKFILE, json.dumps({"extensions": {"@x/e": {"version": "3"}, "@b/new": {}}}))
    a.push()
    with pytest.raises(ConflictError) as err:
        b.push()
    assert "extensions.@x/e.version" in str(err.value)
    (conflict,) = err.value.counts.conflicts
    assert conflict["keys"] == ["extensions.@x/e.version"] and conflict["path"] == LOCKFILE
    # theirs in place, ours kept aside (never pushed), the remote has a's version
    assert _doc(b)["extensions"]["@x/e"]["version"] == "2"
    assert json.loads(read(b, conflict["savedAs"]))["extensions"]["@x/e"]["version"] == "3"
    assert json.loads(read(b, conflict["savedAs"]))["extensions"]["@b/new"] == {}
    assert b.status()["conflicts"] == [{"path": LOCKFILE, "savedAs": conflict["savedAs"], "seq": 2}]
    a.pull()
    assert _doc(a)["extensions"] == {"@x/e": {"version": "2"}}
    assert not any(".conflict-" in k for k in store._objects)
    assert b.push().filesPushed == 0


def test_yaml_documents_merge_and_keep_our_comments(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "config/shared.yaml", "# team settings\nregion: eu\nsize: 1\n")
    a.push()
    b.pull()
    write(a, "config/shared.yaml", "# team settings\nregion: eu\nsize: 2\n")
    write(b, "config/shared.yaml", "# team settings\nregion: eu  # moved\nsize: 1\non: yes\n")
    a.push()
    b.push()
    a.pull()
    text = read(b, "config/shared.yaml").decode()
    assert "# team settings" in text and "# moved" in text
    from ruamel.yaml import YAML

    assert YAML(typ="safe").load(read(a, "config/shared.yaml")) == {"region": "eu", "size": 2, "on": "yes"}
    assert read(a, "config/shared.yaml") == read(b, "config/shared.yaml")


def test_other_files_keep_theirs_and_save_ours(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/notes.txt", b"base")
    a.push()
    b.pull()
    write(a, "files/notes.txt", b"theirs")
    write(b, "files/notes.txt", b"ours")
    a.push()
    with pytest.raises(SyncConflictError) as err:
        b.sync()
    (c,) = err.value.counts.conflicts
    their_id = json.loads(store.get("default/log/00000000000000000002.json")[0])["id"]
    # named by peer, seq and their commit's id (seqs repeat after a remote reset; ids never)
    assert c["savedAs"] == f"files/notes.txt.conflict-b-2-{their_id[:12]}" and c["peer"] == "a"
    assert read(b, "files/notes.txt") == b"theirs" and read(b, c["savedAs"]) == b"ours"
    assert err.value.exit_code == 1
    # ours is never pushed; a later sync is clean
    assert b.sync().conflicts == []
    a.pull()
    assert files(a) == {"files/notes.txt": b"theirs"}


def test_same_change_on_both_sides_is_no_conflict(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/f", b"same")
    write(b, "files/f", b"same")
    a.push()
    counts = b.sync()
    assert counts.conflicts == [] and counts.filesPushed == 0


def test_delete_against_modify_keeps_both(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/f", b"v1")
    a.push()
    b.pull()
    delete(a, "files/f")
    a.push()
    write(b, "files/f", b"v2 edited")
    with pytest.raises(SyncConflictError) as err:
        b.sync()
    (c,) = err.value.counts.conflicts
    assert c["theirs"] == "delete" and read(b, "files/f") is None and read(b, c["savedAs"]) == b"v2 edited"


def test_two_peers_publishing_the_same_version_second_is_renumbered(make_peer, store):
    # The second publisher's version was never published: it moves to the
    # next free number (renumber.py), the first one's is never overwritten.
    a, b, c = make_peer("a"), make_peer("b"), make_peer("c")
    v1 = "data/acme-counter/m1/count/1"
    write(a, f"{v1}/raw", b'{"value": 1}')
    write(a, f"{v1}/metadata.yaml", b"version: 1\nby: a\n")
    write(b, f"{v1}/raw", b'{"value": 100}')
    write(b, f"{v1}/metadata.yaml", b"version: 1\nby: b\n")
    a.push("model method run")
    counts = b.push("model method run")
    assert counts.conflicts == [] and counts.head == 2  # published in the same push
    c.pull()
    assert read(c, f"{v1}/raw") == b'{"value": 1}' and read(c, f"{v1}/metadata.yaml") == b"version: 1\nby: a\n"
    v2 = "data/acme-counter/m1/count/2"
    assert read(c, f"{v2}/raw") == b'{"value": 100}' and b"version: 2" in read(c, f"{v2}/metadata.yaml")


# ------------------------------------------------- files and directories
def _tree_of_log(store) -> dict[str, str]:
    """The committed tree, replayed from the whole log."""
    from swamp.datastore.sync.commitlog import decode
    from swamp.datastore.sync.layout import Layout

    tree: dict[str, str] = {}
    for key in sorted(k for k in store._objects if "/log/" in k):
        for ch in decode(Layout("default").log_seq(key), store.get(key)[0]).changes:
            if ch.op == "put":
                tree[ch.path] = ch.sha256
            else:
                tree.pop(ch.path, None)
    return tree


def _is_a_tree(paths) -> bool:
    paths = set(paths)
    return not any("/".join(p.split("/")[:i]) in paths for p in paths for i in range(1, p.count("/") + 1))


def test_a_file_replaced_by_a_directory_propagates_both_ways(make_peer, store):
    """A path that cannot hold a file holds none: files/x turned into the
    directory files/x/ is the delete of files/x plus the put of files/x/y,
    and the peer that had files/x gets the directory (S4)."""
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/x", b"a file")
    a.push()
    b.pull()
    delete(a, "files/x")
    write(a, "files/x/y", b"now inside a directory")
    a.push()
    assert _tree_of_log(store).keys() == {"files/x/y"}
    counts = b.pull()
    assert counts.conflicts == [] and files(b) == {"files/x/y": b"now inside a directory"}
    fresh = make_peer("fresh")
    fresh.pull()
    assert files(fresh) == files(a) == files(b)


def test_a_directory_turned_into_a_file_under_our_unpublished_file_is_reported_not_lost(make_peer, store):
    """B turns files/x/ into a file while A adds files/x/z (not yet pushed).
    A's pull cannot write files/x (its own file is in the way): a conflict
    is reported, files/x counts as committed but not here (no delete is
    pushed for it), and A's push refuses files/x/z rather than make the
    remote hold a file and a directory at files/x. Once A moves its file
    away, files/x arrives on read, and nothing was lost (S1)."""
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/x/y", b"inside")
    a.push()
    b.pull()
    delete(b, "files/x/y")
    (b.root / "files/x").rmdir()
    write(b, "files/x", b"now a file")
    b.push()
    write(a, "files/x/z", b"ours, unpublished")
    with pytest.raises(SyncConflictError) as err:
        a.sync()
    reported = {c["path"]: c for c in err.value.counts.conflicts}
    assert set(reported) == {"files/x", "files/x/z"}, reported
    assert "in the way" in reported["files/x"]["reason"] and "'files/x'" in reported["files/x/z"]["reason"]
    assert read(a, "files/x/z") == b"ours, unpublished" and not (a.root / "files/x/y").exists()
    assert _tree_of_log(store).keys() == {"files/x"}
    with pytest.raises(SyncConflictError):
        a.push()  # still refused, still reported: never silently dropped
    assert _tree_of_log(store).keys() == {"files/x"}
    (a.root / "files/x/z").rename(a.root / "files/z")
    (a.root / "files/x").rmdir()
    write(a, "files/z", read(a, "files/z"))
    assert a.hydrate("files/x") and read(a, "files/x") == b"now a file"
    counts = a.sync()
    assert counts.conflicts == []
    b.pull()
    assert files(a) == files(b) == {"files/x": b"now a file", "files/z": b"ours, unpublished"}


def test_racing_peers_never_commit_a_file_and_a_directory_at_one_path(make_peer, store):
    """Whoever commits second sees the first's commit at its rebase: the
    remote tree stays a tree whatever the order."""
    for first in ("file", "dir"):
        store._objects.clear()
        a, b = make_peer(f"a-{first}"), make_peer(f"b-{first}")
        write(a, "files/x", b"a file")
        write(b, "files/x/y", b"a file in a directory")
        (a if first == "file" else b).push()
        with pytest.raises(SyncConflictError):
            (b if first == "file" else a).sync()
        assert _is_a_tree(_tree_of_log(store)), _tree_of_log(store)
        fresh = make_peer(f"fresh-{first}")
        fresh.pull()
        assert set(files(fresh)) == ({"files/x"} if first == "file" else {"files/x/y"})
