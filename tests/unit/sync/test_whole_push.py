"""A push reads a file of up to WHOLE_MAX bytes whole, once, and sends the
bytes it hashed (one PUT of the blob, no second read to check the hash);
a larger one streams from the file. A pull streams either into place."""

from __future__ import annotations

import os

import pytest

from swamp.datastore.sync import transfers
from swamp.datastore.sync.localtree import LocalTree
from swamp.datastore.sync.transfers import SMALL_FILE, WHOLE_MAX

from .conftest import files, read, write
from .test_streaming_engine import Recording

MID = SMALL_FILE * 4


@pytest.fixture
def store() -> Recording:
    return Recording()


def test_a_mid_size_file_is_read_once_and_sent_whole(make_peer, store, monkeypatch):
    assert SMALL_FILE < MID <= WHOLE_MAX
    a, b = make_peer("a"), make_peer("b")
    content = os.urandom(MID)
    write(a, "data/t/m/mid/1/raw", content)
    hashed = []
    real_hash = LocalTree._hash
    monkeypatch.setattr(LocalTree, "_hash", lambda self, rel, path: hashed.append(rel) or real_hash(self, rel, path))

    counts = a.push()
    assert store.blob_calls() == ["put"]  # the bytes read, not a stream of the file
    assert hashed == []  # no separate hashing pass: the read hashed it
    assert counts.bytesPushed == MID and counts.filesPushed == 1
    assert a.push().requests <= 1  # its base is what was sent

    store.calls.clear()
    b.pull()
    assert store.blob_calls() == ["get_file"]  # a pull streams it into place
    assert read(b, "data/t/m/mid/1/raw") == content
    assert a.verify()["ok"]


def test_one_that_grew_past_the_limit_since_the_diff_streams(make_peer, store, monkeypatch):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/grows", os.urandom(MID))
    real_diff = type(a)._diff

    def diff_then_grow(self, cands):
        out = real_diff(self, cands)
        (self.root / "files/grows").write_bytes(os.urandom(MID * 2))  # after the diff, before the send
        return out

    monkeypatch.setattr(type(a), "_diff", diff_then_grow)
    monkeypatch.setattr(transfers, "WHOLE_MAX", MID + 1)
    a.push()
    assert store.blob_calls() == ["put_file"]
    monkeypatch.undo()
    b.pull()
    assert files(b) == files(a)
    assert a.verify()["ok"]
