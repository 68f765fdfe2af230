"""Faults: transient errors and writes that land although the client saw an
error. A sync completes or fails cleanly; a rerun converges; nothing that
was written is lost or duplicated (S5, S6)."""

from __future__ import annotations

import json
import random

import pytest

from swamp.errors import SyncConflictError, TransientError

from .conftest import files, read, write
from .faultstore import FaultyStore, Retrying

DOC = "config/shared.json"


def _log_keys(store):
    return sorted(k for k in store._objects if "/log/" in k)


def test_commit_that_landed_but_reported_an_error_is_recognised(make_peer, store):
    faulty = FaultyStore(store, after=1.0, only="/log/")
    a, b = make_peer("a", store=faulty), make_peer("b")
    write(a, "files/f", b"v1")
    with pytest.raises(TransientError):
        a.push()
    assert len(_log_keys(store)) == 1  # the commit is durable, a just does not know it
    write(a, "files/g", b"more")  # a keeps working before the rerun
    faulty.after = 0.0
    counts = a.push()
    assert len(_log_keys(store)) == 2 and counts.head == 2 and counts.conflicts == []
    b.pull()
    assert files(b) == {"files/f": b"v1", "files/g": b"more"}


def test_a_retried_commit_put_answering_412_is_not_a_lost_race(make_peer, store):
    faulty = FaultyStore(store, after=1.0, only="/log/")
    a = make_peer("a", store=Retrying(faulty))
    write(a, "files/f", b"v1")
    write(a, "files/f2", b"v2")
    faulty.after = 1.0
    # First PUT lands and "fails"; the retry gets 412; the engine pulls and
    # finds its own commit. Then the whole push is done, once.
    faulty_once = iter([True])
    faulty._roll = lambda p, key: "/log/" in key and next(faulty_once, False)
    counts = a.push()
    assert _log_keys(store) == ["default/log/00000000000000000001.json"]
    assert counts.filesPushed == 2 and counts.head == 1
    assert a.push().requests == 0


@pytest.mark.parametrize("seed", [3, 7, 11])
def test_random_faults_then_rerun_converges_without_loss(make_peer, store, seed):
    rng = random.Random(seed)
    faulty = FaultyStore(store, before=0.15, after=0.15, seed=seed)
    peers = [make_peer(f"p{i}", store=faulty) for i in range(3)]
    written: dict[str, bytes] = {}
    keys: set[str] = set()
    failures = 0
    for step in range(60):
        e = rng.choice(peers)
        rel = f"files/{e.peer}/{rng.randrange(4)}"
        data = f"{e.peer}-{step}".encode()
        write(e, rel, data)
        written[rel] = data
        doc = json.loads(read(e, DOC) or b"{}")
        doc[f"{e.peer}-{step}"] = step
        keys.add(f"{e.peer}-{step}")
        write(e, DOC, json.dumps(doc))
        try:
            e.sync(f"step {step}")
        except (TransientError, SyncConflictError):
            failures += 1
    assert faulty.injected > 10 and failures > 5
    faulty.before = faulty.after = 0.0
    for _ in range(2):
        for e in peers:
            e.sync()
    views = [files(e) for e in peers]
    assert views[0] == views[1] == views[2]
    for rel, data in written.items():
        assert views[0][rel] == data
    assert set(json.loads(views[0][DOC])) == keys
    logs = _log_keys(store)
    assert logs == [f"default/log/{i:020d}.json" for i in range(1, len(logs) + 1)]
    assert not any(".conflict-" in rel for e in peers for rel in e.tree.walk())
