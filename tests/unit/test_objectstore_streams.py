"""Streaming transfers (put_file / get_file): timeouts that grow with the
size moved, S3 multipart for large files (also past AWS's 5 GiB single-PUT
limit, in at most 10,000 parts), and retries that start a transfer over."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.objectstore.s3 import MAX_PARTS, S3ObjectStore
from swamp.datastore.objectstore.streams import HashingReader, transfer_timeout_s
from swamp.errors import PreconditionFailed, TransientError

GIB = 1 << 30


def test_the_timeout_grows_with_the_size_moved():
    assert transfer_timeout_s(0, 30) == 30
    assert transfer_timeout_s(2 * GIB, 30) == 30 + 2048  # at 1 MiB/s
    assert transfer_timeout_s(2 * GIB, 30, min_rate=8 << 20) == 30 + 256


def _s3() -> S3ObjectStore:
    return S3ObjectStore("bucket", "p", endpoint_url="http://127.0.0.1:9", region="us-east-1")


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)  # no blocks on disk
    return path


def test_s3_requests_get_clients_whose_timeout_fits_their_size():
    clients = _s3().clients
    assert clients.receiving(1 << 20) is clients.plain  # small: the ordinary 30 s client
    big = clients.receiving(2 * GIB)
    assert big is clients.receiving(2 * GIB - 12345)  # one client per power-of-two timeout
    ((whole, answer),) = clients._sized
    assert whole >= transfer_timeout_s(2 * GIB, 30)
    assert answer == 5  # the answer still has to start within the answer limit


def test_s3_uploads_get_an_answer_limit_that_includes_sending_the_body():
    clients = _s3().clients
    assert clients.sending(1000) is clients.plain
    clients.sending(8 << 20)
    ((whole, answer),) = clients._sized
    assert answer >= transfer_timeout_s(8 << 20, 5) and whole >= transfer_timeout_s(8 << 20, 30)


@pytest.mark.parametrize("size", [6 * GIB, 100 * GIB])
def test_s3_large_files_go_up_in_parts(tmp_path, monkeypatch, size):
    import obstore

    calls = []

    def fake_put(store, key, file, **kw):
        calls.append((store, key, file, kw))
        return {"e_tag": '"x-1"', "version": None}

    monkeypatch.setattr(obstore, "put", fake_put)
    s = _s3()
    monkeypatch.setattr(s, "head", lambda key: None)
    s.put_file("blobs/ab/abc", _sparse(tmp_path / "f", size), if_none_match=True)
    ((store, key, file, kw),) = calls
    assert kw["use_multipart"] is True and "mode" not in kw
    assert kw["chunk_size"] >= 5 << 20 and -(-size // kw["chunk_size"]) <= MAX_PARTS
    assert isinstance(file, HashingReader)  # obstore reads it part by part, through the hash


def test_s3_create_only_above_the_threshold_refuses_an_existing_key(tmp_path, monkeypatch):
    import obstore

    from swamp.datastore.objectstore.base import ObjectMeta

    monkeypatch.setattr(obstore, "put", lambda *a, **kw: pytest.fail("uploaded over an existing key"))
    s = _s3()
    monkeypatch.setattr(s, "head", lambda key: ObjectMeta(key, 1, "e", 0.0))
    with pytest.raises(PreconditionFailed):
        s.put_file("blobs/ab/abc", _sparse(tmp_path / "f", 64 << 20), if_none_match=True)


def test_s3_small_files_are_one_conditional_put(tmp_path, monkeypatch):
    import obstore

    calls = []
    monkeypatch.setattr(obstore, "put", lambda store, key, f, **kw: calls.append(kw) or {"e_tag": '"e"'})
    _s3().put_file("k", _sparse(tmp_path / "f", 1 << 20), if_none_match=True)
    assert calls == [{"mode": "create", "use_multipart": False}]


class LostAnswers(LocalDirObjectStore):
    """Applies the first put_file, then reports a timeout; fails the first
    get_file halfway through."""

    def __init__(self, root):
        super().__init__(root)
        self.lost = {"put": 1, "get": 1}

    def put_file(self, key, path, *, if_none_match=False, sha256=None):
        etag = super().put_file(key, path, if_none_match=if_none_match, sha256=sha256)
        if self.lost["put"]:
            self.lost["put"] -= 1
            raise TransientError("timed out")
        return etag

    def get_file(self, key, dest, *, size_hint=None, fsync=False):
        if self.lost["get"]:
            self.lost["get"] -= 1
            with open(dest, "wb") as f:
                f.write(b"half of it")
            raise TransientError("connection reset")
        return super().get_file(key, dest, size_hint=size_hint, fsync=fsync)


def test_a_create_only_put_file_whose_answer_was_lost_is_recognised_as_ours(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"blob bytes" * 1000)
    store = RetryingObjectStore(LostAnswers(tmp_path / "objects"), sleep=lambda s: None)
    etag = store.put_file("blobs/x", src, if_none_match=True)
    assert store.head("blobs/x").etag == etag


def test_a_create_only_put_file_lost_to_other_bytes_still_fails(tmp_path):
    class TimesOutOnce(LocalDirObjectStore):
        timed_out = False

        def put_file(self, key, path, *, if_none_match=False, sha256=None):
            if not self.timed_out:
                self.timed_out = True
                raise TimeoutLike("timed out")  # applied or not: we cannot tell
            return super().put_file(key, path, if_none_match=if_none_match, sha256=sha256)

    inner = TimesOutOnce(tmp_path / "objects")
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    theirs.write_bytes(b"theirs")
    ours.write_bytes(b"ours")
    inner.put("k", theirs.read_bytes(), if_none_match=True)
    with pytest.raises(PreconditionFailed):
        RetryingObjectStore(inner, sleep=lambda s: None).put_file("k", ours, if_none_match=True)
    assert inner.get("k")[0] == b"theirs"


class TimeoutLike(TransientError):
    pass


def test_a_get_file_cut_halfway_starts_over(tmp_path):
    store = RetryingObjectStore(LostAnswers(tmp_path / "objects"), sleep=lambda s: None)
    data = bytes(range(256)) * 5000
    store.put("k", data)
    got = store.get_file("k", tmp_path / "dest")
    assert (tmp_path / "dest").read_bytes() == data
    assert got.sha256 == hashlib.sha256(data).hexdigest() and got.size == len(data)


def test_the_reader_refuses_to_hand_over_the_end_of_a_changed_file(tmp_path):
    import io

    from swamp.datastore.objectstore.streams import Mismatch

    data = b"x" * 10_000
    good = HashingReader(io.BytesIO(data), len(data), hashlib.sha256(data).hexdigest())
    assert b"".join(iter(lambda: good.read(4096), b"")) == data
    for changed in (b"y" + data[1:], data + b"grew", data[:-1]):
        r = HashingReader(io.BytesIO(changed), len(data), hashlib.sha256(data).hexdigest())
        with pytest.raises(Mismatch):
            while r.read(4096):
                pass
        assert r.mismatch
