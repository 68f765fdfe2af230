"""Attaching again to a bucket restored from an older copy (issue 24, N5):
each peer republishes only its own work; its copies of other peers'
versions are recognised and never republished, whichever peer attaches
first: no content twice, no number skipped, no conflict. On the memory
store, the rewind being the bucket's objects put back as they were (same
bytes and ETags, as a restore from backup gives on S3)."""

from __future__ import annotations

import pytest
import yaml

from swamp.datastore.sync import identity
from swamp.datastore.sync.localonly import is_conflict_copy
from swamp.errors import RemoteChangedError

from .conftest import files, read, write

V = "data/acme/counter/m1/result"


def _run(e, v: int, text: str) -> None:
    """A run's version ``v`` of ``result`` and its metadata (unique id)."""
    write(e, f"{V}/{v}/raw", text.encode())
    write(e, f"{V}/{v}/metadata.yaml", yaml.safe_dump({"id": f"id-{text}", "name": "result", "version": v,
                                                       "owner": {"definitionId": "m1"}}).encode())


def _contents(e) -> list[tuple[int, str]]:
    out = []
    for rel, data in files(e).items():
        if rel.startswith(V + "/") and rel.endswith("/raw"):
            out.append((int(rel.split("/")[-2]), data.decode()))
    return sorted(out)


def _setup_again(e) -> dict:
    """What `datastore setup` does, in order (app/datastore.py)."""
    assert e.attach_remote() is True  # the old state was another chain's
    counts = e.pull()
    aside = e.set_aside_copies()
    counts.add(e.push("datastore setup", full_walk=True))
    return {**aside, **counts.to_json()}


@pytest.fixture
def rewound(make_peer, store):
    """S ran v1, the bucket was copied; A ran v2 and v3, B pulled them; the
    bucket is restored from the copy and S (whose head is the copy's)
    publishes a new v2. Returns (s, a, b)."""
    s, a, b = make_peer("s"), make_peer("a"), make_peer("b")
    s.init_remote()
    identity.attach(s.state, s.store, s.layout)
    _run(s, 1, "S-1")
    s.push()
    snapshot = dict(store._objects)
    a.pull()
    _run(a, 2, "A-2")
    a.push()
    _run(a, 3, "A-3")
    a.push()
    b.pull()
    assert _contents(b) == [(1, "S-1"), (2, "A-2"), (3, "A-3")]
    store._objects.clear()
    store._objects.update(snapshot)
    s.pull()
    _run(s, 2, "S-new")
    s.push()
    for peer in (a, b):
        with pytest.raises(RemoteChangedError):
            peer.pull()
    return s, a, b


WANTED = [(1, "S-1"), (2, "S-new"), (3, "A-2"), (4, "A-3")]


def _fresh(make_peer):
    f = make_peer("fresh")
    f.pull()
    return f


def _no_conflict_copies(*peers) -> None:
    for e in peers:
        assert not any(is_conflict_copy(p) for p in e.tree.walk()), e.peer


def test_the_author_attaching_first_republishes_its_versions_and_the_copy_holder_none(rewound, make_peer):
    s, a, b = rewound
    got_a = _setup_again(a)
    assert got_a["conflicts"] == []
    assert sorted((r["from"], r["to"]) for r in got_a["renumbered"]) == [(2, 3), (3, 4)]  # nothing skipped
    got_b = _setup_again(b)
    assert got_b["conflicts"] == [] and "renumbered" not in got_b
    assert got_b["filesPushed"] == 0 and got_b["copiesSetAside"] == 0  # its copies were the remote's
    f = _fresh(make_peer)
    assert _contents(f) == WANTED
    s.pull()
    for e in (s, a, b):
        assert files(e) == files(f), e.peer
    _no_conflict_copies(s, a, b)


def test_the_copy_holder_attaching_first_publishes_nothing_and_sets_the_copies_aside(rewound, make_peer):
    s, a, b = rewound
    got_b = _setup_again(b)
    assert got_b["conflicts"] == [] and "renumbered" not in got_b
    assert got_b["filesPushed"] == 0
    # its copy of A-2 was replaced by the remote's v2; A-3 is not on the remote: set aside, local only
    assert got_b["copiesSetAside"] == 2  # v3's raw and metadata
    assert read(b, f"{got_b['copiesDir']}/{V}/3/raw") == b"A-3"
    assert _contents(b) == [(1, "S-1"), (2, "S-new")]
    got_a = _setup_again(a)
    assert got_a["conflicts"] == []
    b.pull()
    s.pull()
    f = _fresh(make_peer)
    assert _contents(f) == WANTED
    for e in (s, a, b):
        assert files(e) == files(f), e.peer
    _no_conflict_copies(s, a, b)
    assert b.status()["dirtyFiles"] == [] and a.status()["dirtyFiles"] == []


def test_own_unpublished_work_is_still_republished_beside_the_copies(rewound, make_peer):
    """A copy holder's own run that was never published (its push refused
    after the rewind) is its own work: republished, above the remote's."""
    s, a, b = rewound
    _run(b, 4, "B-4")  # written on top of its copies, never published
    got_b = _setup_again(b)
    assert got_b["conflicts"] == []
    assert got_b["closedGaps"] == [{"versions": V, "from": 4, "to": 3}]  # v3 was a copy, set aside
    _setup_again(a)
    b.pull()
    f = _fresh(make_peer)
    texts = [t for _v, t in _contents(f)]
    assert sorted(texts) == sorted(["S-1", "S-new", "A-2", "A-3", "B-4"])  # each once
    assert [v for v, _t in _contents(f)] == [1, 2, 3, 4, 5]
