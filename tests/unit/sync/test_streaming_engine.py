"""Large files stream through the engine: a push sends them from the file
(put_file) and a pull writes them into place from the download (get_file),
never through whole-bytes calls; a file rewritten while it is sent is left
for the next push; a download that does not match its hash never replaces
a file. Small files keep the whole-bytes path."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.objectstore.streams import Download
from swamp.datastore.sync import transfers
from swamp.datastore.sync.transfers import SMALL_FILE
from swamp.errors import CorruptRemoteError, SyncConflictError
from swamp.util.atomic import TMP_PREFIX

from .conftest import files, read, write

BIG = SMALL_FILE + 1


class Recording(MemoryObjectStore):
    """A memory store that remembers which call moved each blob, and can
    rewrite a source file or damage a download on the way."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.rewrite: bytes | None = None  # the next put_file rewrites its file with these first
        self.damage = False

    def put(self, key, data, **kw):
        self.calls.append(("put", key))
        return super().put(key, data, **kw)

    def get(self, key):
        self.calls.append(("get", key))
        return super().get(key)

    def put_file(self, key, path, **kw):
        self.calls.append(("put_file", key))
        new, self.rewrite = self.rewrite, None
        if new is not None:
            Path(path).write_bytes(new)
        data = Path(path).read_bytes()
        if kw.get("sha256") and hashlib.sha256(data).hexdigest() != kw["sha256"]:
            raise self._source_changed(key, path)
        return super().put(key, data, if_none_match=kw.get("if_none_match", False))

    def get_file(self, key, dest, **kw):
        self.calls.append(("get_file", key))
        data, etag = MemoryObjectStore.get(self, key)  # not self.get: that one records a whole-bytes get
        if self.damage:
            data = bytes([data[0] ^ 0xFF]) + data[1:]  # changed whatever it was (b"X" kept a random first X)
        Path(dest).write_bytes(data)
        return Download(hashlib.sha256(data).hexdigest(), len(data), etag)

    def blob_calls(self) -> list[str]:
        return [op for op, key in self.calls if "/blobs/" in key or key.startswith("blobs/")]


@pytest.fixture
def store() -> Recording:
    return Recording()


@pytest.fixture(autouse=True)
def _stream_above_small(monkeypatch):
    # A push reads files up to WHOLE_MAX whole (test_whole_push.py); here
    # every file above SMALL_FILE streams both ways, as in one of more than
    # WHOLE_MAX bytes, without writing that many in each test.
    monkeypatch.setattr(transfers, "WHOLE_MAX", SMALL_FILE)


def _temps(root: Path) -> list[str]:
    return [n for _d, _s, fs in os.walk(root) for n in fs if n.startswith(TMP_PREFIX)]


def test_a_large_file_streams_both_ways_and_a_small_one_does_not(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    big = os.urandom(BIG)
    write(a, "data/t/m/big/1/raw", big)
    write(a, "data/t/m/small/1/raw", os.urandom(SMALL_FILE))
    counts = a.push()
    assert sorted(store.blob_calls()) == ["put", "put_file"]  # concurrent: in any order
    assert counts.bytesPushed >= BIG + SMALL_FILE

    store.calls.clear()
    counts = b.pull()
    assert sorted(store.blob_calls()) == ["get", "get_file"]
    assert read(b, "data/t/m/big/1/raw") == big
    assert counts.bytesPulled == BIG + SMALL_FILE and counts.filesPulled == 2
    assert _temps(b.root) == []
    assert b.push().requests <= 1  # nothing to send back: its base is what it wrote


def test_one_download_for_a_large_content_at_two_paths(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    big = os.urandom(BIG)
    write(a, "files/one", big)
    write(a, "files/two", big)
    a.push()
    assert store.blob_calls() == ["put_file"]  # each content once
    store.calls.clear()
    b.pull()
    assert store.blob_calls() == ["get_file"]
    assert read(b, "files/one") == read(b, "files/two") == big


def test_a_file_rewritten_while_it_is_sent_is_published_by_the_next_push(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    first, second = os.urandom(BIG), os.urandom(BIG + 10)
    write(a, "files/one", first)
    write(a, "files/two", first)  # relies on the same blob, sent once
    write(a, "files/other", b"small")
    store.rewrite = second  # whichever of the two is sent is rewritten under the upload
    a.pull()  # the head is current: the push makes one attempt
    a.push()
    assert a.verify()["ok"]  # nothing committed refers to a blob that was not stored
    b.pull()
    assert files(b) == {"files/other": b"small"}  # neither relied-on content was stored

    a.push()
    b.pull()
    assert files(b) == files(a)
    assert sorted([read(b, "files/one"), read(b, "files/two")]) == sorted([first, second])
    assert a.verify()["ok"] and a.status()["dirtyFiles"] == []


def test_a_download_that_does_not_match_its_hash_replaces_nothing(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/big", os.urandom(BIG))
    a.push()
    write(b, "files/big", b"mine, unpublished")
    store.damage = True
    with pytest.raises(CorruptRemoteError):
        b.pull()
    assert read(b, "files/big") == b"mine, unpublished"
    assert _temps(b.root) == []
    assert b.state.head == 0


def test_a_large_conflict_streams_theirs_and_keeps_ours(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/big", b"start")
    a.push()
    b.pull()
    theirs = os.urandom(BIG)
    write(a, "files/big", theirs)
    a.push()
    write(b, "files/big", b"ours")
    store.calls.clear()
    with pytest.raises(SyncConflictError) as e:
        b.pull()
    saved = e.value.counts.conflicts[0]["savedAs"]
    assert read(b, saved) == b"ours" and read(b, "files/big") == theirs
    assert store.blob_calls() == ["get_file"]


def test_a_lazy_cache_hydrates_a_large_file_by_streaming(make_peer, store):
    a, b = make_peer("a"), make_peer("b", hydration="lazy")
    big = os.urandom(BIG)
    write(a, "data/t/m/big/1/raw", big)
    a.push()
    b.pull()
    store.calls.clear()
    assert b.hydrate("data/t/m/big/1/raw")
    assert store.blob_calls() == ["get_file"]
    assert read(b, "data/t/m/big/1/raw") == big


def test_the_whole_bytes_path_is_still_there_when_streaming_is_off(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    a.stream_large = b.stream_large = False
    big = os.urandom(BIG)
    write(a, "files/big", big)
    a.push()
    b.pull()
    assert store.blob_calls() == ["put", "get"]
    assert read(b, "files/big") == big
