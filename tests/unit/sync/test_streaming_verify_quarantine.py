"""Large blobs stream in the last two places that read them whole:
`datastore verify` hashes a large blob as it downloads it into a scratch
file, and taking back what was written under a lost lease puts a large
committed content back in place from the download. Small blobs keep the
whole-bytes path. (Streaming itself is tests/unit/sync/test_streaming_engine.py.)"""

from __future__ import annotations

import os

import pytest

from swamp.errors import LeaseLostError

from .conftest import read, write
from .test_streaming_engine import BIG, Recording

LEASE = "model/acme/thing/123"
REL = "data/acme/thing/123/state/big"


@pytest.fixture
def store() -> Recording:  # make_peer's store: a recording one
    return Recording()


def test_verify_streams_a_large_blob_and_still_finds_damage(make_peer, store):
    a = make_peer("a", inline_max=0)  # the small one a blob too
    write(a, "files/big", os.urandom(BIG))
    write(a, "files/small", os.urandom(BIG // 4))
    a.push()
    store.calls.clear()
    report = a.verify()
    assert report["ok"] and report["blobs"] == 2
    calls = store.blob_calls()
    assert sorted(calls) == ["get", "get_file"]  # the large one streamed, the small one whole
    store.damage = True  # what the large download gets no longer matches its hash
    report = a.verify()
    assert not report["ok"] and any("does not match its hash" in e for e in report["errors"])


def test_a_lost_lease_puts_a_large_committed_content_back_by_streaming(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    committed = os.urandom(BIG)
    write(a, REL, committed)
    a.push()
    ours = os.urandom(BIG + 5)
    store.calls.clear()
    with pytest.raises(LeaseLostError):
        with a.lease(LEASE):
            write(a, REL, ours)
            assert b.force_release_lease(LEASE)
            a.push()
    assert read(a, REL) == committed  # back to what is committed
    assert "get_file" in store.blob_calls() and "get" not in store.blob_calls()
    kept = list((a.root / ".sync" / "lost-lease").rglob("big"))
    assert [p.read_bytes() for p in kept] == [ours]
