"""The local directory store's own mechanics: the on-disk layout, stalled
writers, tombstones, dead writers' temp files. (The shared contract, racing
processes included, is in tests/integration/test_objectstore_contract.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swamp.datastore.objectstore import local
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.errors import PreconditionFailed, TransientError


@pytest.fixture
def store(tmp_path: Path) -> LocalDirObjectStore:
    return LocalDirObjectStore(tmp_path / "root")


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def test_layout_keeps_every_key_inside_the_root(store: LocalDirObjectStore, tmp_path: Path) -> None:
    for key in ["a", "a/b", "a#/b", "%2e%2e/x", ".hidden/..x"]:
        store.put(key, b"x")
    assert not (tmp_path / "x").exists()
    assert [p for p in files_under(tmp_path) if not p.startswith("root/")] == []
    assert sorted(m.key for m in store.list()) == sorted(["a", "a/b", "a#/b", "%2e%2e/x", ".hidden/..x"])


def test_a_writer_that_stalled_past_a_newer_write_loses(store: LocalDirObjectStore) -> None:
    directory = store._dir("k")
    store.put("k", b"1")
    stale = store._current(directory, body=False)  # read, then stall...
    store.put("k", b"2")  # ...while someone else writes
    with pytest.raises(local._Conflict):
        store._write(directory, stale, b"stale")
    assert store.get("k")[0] == b"2"


def test_a_writer_stalled_past_collection_is_caught_afterwards(store: LocalDirObjectStore,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "KEEP_SUPERSEDED_S", -1.0)  # collect superseded generations at once
    directory = store._dir("k")
    store.put("k", b"1")
    stale = store._current(directory, body=False)
    store.put("k", b"2")
    store.put("k", b"3")  # collects generations 1 and 2: the stale writer's target name is free again
    assert local._generations(directory) == [3]
    with pytest.raises(local._Conflict):
        store._write(directory, stale, b"stale")  # links generation 2, sees 3 was not built on it
    assert store.get("k")[0] == b"3"
    assert local._generations(directory) == [3]


def test_unknown_outcome_is_transient_not_success(store: LocalDirObjectStore,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "KEEP_SUPERSEDED_S", -1.0)
    directory = store._dir("k")
    store.put("k", b"1")
    stale = store._current(directory, body=False)
    for value in (b"2", b"3", b"4"):
        store.put("k", value)
    with pytest.raises(TransientError, match="unknown"):
        store._write(directory, stale, b"stale")
    assert store.get("k")[0] == b"4"


def test_superseded_generations_are_kept_for_a_while(store: LocalDirObjectStore) -> None:
    for value in (b"1", b"2", b"3"):
        store.put("k", value)
    assert local._generations(store._dir("k")) == [1, 2, 3]


def test_delete_leaves_a_tombstone_and_generations_keep_growing(store: LocalDirObjectStore) -> None:
    etag = store.put("k", b"1")
    store.delete("k", if_match=etag)
    assert store.head("k") is None
    with pytest.raises(PreconditionFailed):
        store.put("k", b"back", if_match=etag)  # the old ETag can't resurrect it
    store.put("k", b"2", if_none_match=True)
    assert local._generations(store._dir("k")) == [1, 2, 3]


def test_dead_writers_temp_files_are_invisible_then_swept(store: LocalDirObjectStore,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store.put("k", b"1")
    directory = store._dir("k")
    (directory / ".tmp-dead").write_bytes(b'{"etag": "x"}\nhalf')
    assert [m.key for m in store.list()] == ["k"]
    assert store.get("k")[0] == b"1"
    monkeypatch.setattr(local, "TMP_EXPIRY_S", -1.0)
    store.put("k", b"2")
    assert not (directory / ".tmp-dead").exists()


def test_files_are_readable_by_the_group_on_a_shared_directory(store: LocalDirObjectStore) -> None:
    old = os.umask(0o002)
    try:
        store.put("k", b"1")
    finally:
        os.umask(old)
    (gen,) = local._generations(store._dir("k"))
    assert (store._dir("k") / local._gen_name(gen)).stat().st_mode & 0o060 == 0o060
