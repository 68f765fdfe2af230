"""A download starts the disk's write-back while it arrives (writeback.py),
so the fsync before the file is put in place has little left to wait for.
The hint never changes what lands on disk, and a file system that refuses
it downloads as before."""

from __future__ import annotations

import hashlib
import os

import pytest

from swamp.datastore.objectstore import writeback
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.writeback import WRITEBACK_STEP


@pytest.fixture
def big(tmp_path):
    store = LocalDirObjectStore(tmp_path / "store")
    data = os.urandom(3 * WRITEBACK_STEP + 12345)
    store.put("blobs/big", data)
    return store, data


def test_a_download_asks_the_disk_to_start_on_what_arrived_in_order(big, tmp_path, monkeypatch):
    store, data = big
    asked = []
    monkeypatch.setattr(writeback, "_ADVISE", lambda fd, off, n, advice: asked.append((off, n)))
    got = store.get_file("blobs/big", tmp_path / "out", fsync=True)
    assert (tmp_path / "out").read_bytes() == data
    assert got.sha256 == hashlib.sha256(data).hexdigest() and got.size == len(data)
    # contiguous ranges from the start, each at least a step, none past what was written
    assert asked and asked[0][0] == 0
    assert all(a + n == b for (a, n), (b, _) in zip(asked, asked[1:]))
    assert all(n >= WRITEBACK_STEP for _, n in asked)
    assert asked[-1][0] + asked[-1][1] <= len(data)


def test_a_file_system_that_refuses_the_hint_still_gets_the_whole_file(big, tmp_path, monkeypatch):
    store, data = big

    def refuse(*_a):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(writeback, "_ADVISE", refuse)
    got = store.get_file("blobs/big", tmp_path / "out", fsync=True)
    assert (tmp_path / "out").read_bytes() == data
    assert got.sha256 == hashlib.sha256(data).hexdigest()


def test_without_the_hint_on_the_platform_downloads_are_as_before(big, tmp_path, monkeypatch):
    store, data = big
    monkeypatch.setattr(writeback, "_ADVISE", None)
    store.get_file("blobs/big", tmp_path / "out")
    assert (tmp_path / "out").read_bytes() == data
