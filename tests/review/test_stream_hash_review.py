"""Review of util/digest.Sha256Stream, which stands for ``hashlib.sha256()``
while a method streams a file (ctx.file_writer): the sha256 recorded in the
version's metadata.yaml must be the digest of the bytes written, as
hashlib's was, whatever the method hands to ``write``: bytes, a bytearray,
a memoryview, and a buffer it reuses for the next chunk."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swamp.util.digest import Sha256Stream as _StreamHash
from swamp.util.digest import SMALL
from tests.helpers import cli, init_repo, write_type


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=8), st.sampled_from([bytes, bytearray, memoryview]))
def test_chunks_the_caller_leaves_alone_hash_as_hashlib_does(chunks, kind):
    ours, theirs = _StreamHash(), hashlib.sha256()
    for c in chunks:
        ours.update(kind(c))
        theirs.update(kind(c))
    assert ours.hexdigest() == theirs.hexdigest()


def test_a_stream_past_the_small_limit_hashes_as_hashlib_does():
    ours, theirs = _StreamHash(), hashlib.sha256()
    for c in (b"a" * (SMALL // 2), b"b" * (SMALL // 2), b"c", b"d" * 10):
        ours.update(c)
        theirs.update(c)
    assert ours.hexdigest() == theirs.hexdigest()


@pytest.mark.parametrize("view", [False, True], ids=["bytearray", "memoryview"])
def test_a_reused_buffer_is_hashed_as_it_was_when_written(view):
    ours, theirs = _StreamHash(), hashlib.sha256()
    buf = bytearray(4)
    for i in range(3):
        buf[:] = b"%04d" % i
        chunk = memoryview(buf) if view else buf
        ours.update(chunk)
        theirs.update(chunk)
    assert ours.hexdigest() == theirs.hexdigest() == hashlib.sha256(b"000000010002").hexdigest()


BUFFER_TYPE = '''
    from pydantic import BaseModel
    from swamp import Context, ModelType


    class NoArgs(BaseModel):
        pass


    buf = ModelType("acme/buf", version="2026.01.01.1", global_arguments=NoArgs, description="reuses a buffer")
    buf.file("out", content_type="application/octet-stream")


    @buf.method(description="Stream a file through one reused buffer, as readinto loops do")
    def write(args, ctx: Context) -> None:
        chunk = bytearray(4)
        with ctx.file_writer("out", "out") as w:
            for i in range(3):
                chunk[:] = b"%04d" % i
                w.write(chunk)
'''


def test_a_streamed_files_recorded_sha256_is_the_digest_of_its_bytes(tmp_path):
    repo = init_repo(tmp_path / "r")
    write_type(repo, "buf.py", BUFFER_TYPE)
    assert cli(repo, "model", "create", "acme/buf", "b").code == 0
    r = cli(repo, "model", "method", "run", "b", "write")
    assert r.code == 0, r
    doc = cli(repo, "data", "get", "b", "out").data
    assert doc["content"] == "000000010002"
    assert doc["sha256"] == hashlib.sha256(b"000000010002").hexdigest()
