"""A push reads a file of up to WHOLE_MAX bytes whole, once, and sends the
bytes it hashed (one PUT of the blob, no second read to check the hash);
a larger one streams from the file. A pull streams either into place."""

from __future__ import annotations

import hashlib
import os

import pytest

from swamp.datastore.sync import transfers
from swamp.datastore.sync.changes import LocalChanges
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
    real_diff = LocalChanges.diff

    def diff_then_grow(self, cands):
        out = real_diff(self, cands)
        (self.ctx.root / "files/grows").write_bytes(os.urandom(MID * 2))  # after the diff, before the send
        return out

    monkeypatch.setattr(LocalChanges, "diff", diff_then_grow)
    monkeypatch.setattr(transfers, "WHOLE_MAX", MID + 1)
    a.push()
    assert store.blob_calls() == ["put_file"]
    monkeypatch.undo()
    b.pull()
    assert files(b) == files(a)
    assert a.verify()["ok"]


def test_one_emptied_since_the_diff_is_committed_empty(make_peer, store, monkeypatch):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/shrinks", os.urandom(MID))
    real_diff = LocalChanges.diff

    def diff_then_empty(self, cands):
        out = real_diff(self, cands)
        (self.ctx.root / "files/shrinks").write_bytes(b"")
        return out

    monkeypatch.setattr(LocalChanges, "diff", diff_then_empty)
    a.push()
    monkeypatch.undo()
    b.pull()
    assert read(b, "files/shrinks") == b""
    assert a.verify()["ok"] and a.status()["dirtyFiles"] == []


def test_read_whole_gives_the_bytes_and_teaches_the_stat_cache(make_peer):
    a = make_peer("a")
    content = os.urandom(MID)
    write(a, "files/x", content)
    buf, sha = a.tree.read_whole("files/x")
    try:
        assert bytes(buf) == content and sha == hashlib.sha256(content).hexdigest()
    finally:
        buf.close()
    a.tree.flush_stats()
    assert a.tree.current("files/x").sha256 == sha  # known now without hashing again


def test_a_read_only_view_is_sent_as_it_is_and_a_lost_answer_still_compares():
    from swamp.datastore.objectstore.memory import MemoryObjectStore
    from swamp.datastore.objectstore.retry import RetryingObjectStore

    sent = []

    class AppliedThenLost(MemoryObjectStore):
        """Stores the first PUT, then says it timed out."""

        def put(self, key, data, **kw):
            sent.append(data)
            etag = super().put(key, bytes(data), **kw)
            if len(sent) == 1:
                from swamp.errors import TransientError

                raise TransientError("timed out")
            return etag

    inner = AppliedThenLost()
    store = RetryingObjectStore(inner, attempts=3, sleep=lambda s: None)
    body = bytearray(os.urandom(1000))
    view = memoryview(body).toreadonly()
    etag = store.put("blobs/x", view, if_none_match=True)  # the retry finds our own bytes there
    assert sent[0] is view  # not copied
    assert inner.get("blobs/x") == (bytes(body), etag)
