"""hydration="lazy": version contents are fetched on first read, and a file
not fetched yet is neither a local delete nor a local change."""

from __future__ import annotations

import pytest

import shutil

from .conftest import files, read, write

V1 = "data/acme-c/m1/count/1"


@pytest.fixture
def make_peer(make_peer):
    """These tests are about blobs: nothing travels inline in the records."""
    return lambda name, **kw: make_peer(name, **{"inline_max": 0, **kw})


def test_lazy_pull_defers_contents_until_hydrated(make_peer, store):
    a, b = make_peer("a"), make_peer("b", hydration="lazy")
    write(a, f"{V1}/raw", b"x" * 1000)
    write(a, f"{V1}/metadata.yaml", b"version: 1\n")
    a.push()
    counts = b.pull()
    assert counts.filesPulled == 1 and counts.bytesPulled == len(b"version: 1\n")
    assert read(b, f"{V1}/raw") is None and read(b, f"{V1}/metadata.yaml") == b"version: 1\n"
    # not fetched is not deleted: nothing to push, even on a full walk
    assert b.push(full_walk=True).requests == 0
    assert b.status()["dirtyFiles"] == []
    assert b.hydrate(f"{V1}/raw") is True and read(b, f"{V1}/raw") == b"x" * 1000
    assert b.hydrate(f"{V1}/raw") is True
    assert b.hydrate("data/acme-c/m1/count/9/raw") is False
    assert b.push(full_walk=True).requests == 0


def test_deleting_a_version_never_fetched_propagates(make_peer):
    a, b = make_peer("a"), make_peer("b", hydration="lazy")
    write(a, f"{V1}/raw", b"content")
    write(a, f"{V1}/metadata.yaml", b"version: 1\n")
    write(a, "files/other", b"o")
    a.push()
    b.pull()
    b.mark_dirty(V1)  # data delete: the whole version directory
    shutil.rmtree(b.root / V1)
    assert b.push("data delete").filesDeleted == 2
    a.pull()
    assert files(a) == {"files/other": b"o"}


def test_a_newer_lazy_content_replaces_the_old_one_on_read(make_peer):
    a, b = make_peer("a"), make_peer("b", hydration="lazy")
    write(a, "data/acme-c/m1/count/1/raw", b"first")
    a.push()
    b.pull()
    b.hydrate("data/acme-c/m1/count/1/raw")
    write(a, "data/acme-c/m1/count/1/raw", b"second")  # (immutable paths are not rewritten in practice)
    a.push()
    b.pull()
    assert read(b, "data/acme-c/m1/count/1/raw") is None  # the stale bytes are not left readable
    assert b.hydrate("data/acme-c/m1/count/1/raw") and read(b, "data/acme-c/m1/count/1/raw") == b"second"
