"""A commit is acknowledged only if it extends the exact chain its pusher
pulled (issue 9 item 1, repro a_trimmed_seq_commit): every record names its
parent's id, a pull refuses a commit on another chain, gc never trims a
commit a pusher may still build on, and verify reports a broken chain."""

from __future__ import annotations

import json
import time

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync.gc import MIN_RETENTION_S
from swamp.errors import CorruptRemoteError, ValidationError
from swamp.util import clock

from .conftest import files, write


class ServerClock(MemoryObjectStore):
    """A server whose Last-Modified is its own (real) clock, whatever the
    clock of the process talking to it says."""

    def put(self, key, data, *, if_none_match=False, if_match=None):
        etag = super().put(key, data, if_none_match=if_none_match, if_match=if_match)
        with self._lock:
            body, tag, _ = self._objects[key]
            self._objects[key] = (body, tag, time.time())
        return etag


def _log(store):
    return sorted(int(k.rsplit("/", 1)[1].split(".")[0]) for k in store._objects if "/log/" in k)


@pytest.fixture
def gc_clock_ahead():
    """The machine running gc has a clock days ahead of the server's."""
    def ahead(days: float) -> None:
        clock.set_clock(lambda: time.time() + days * 86400)
    yield ahead
    clock.set_clock(None)


def test_gc_refuses_a_retention_shorter_than_a_push_may_trust_a_listing(make_peer):
    """repro a ran `datastore gc --retention-days 0`: refused now, naming the minimum."""
    q = make_peer("q")
    write(q, "files/base", b"base")
    q.push()
    with pytest.raises(ValidationError) as err:
        q.gc(retention_days=0)
    assert "0.042 days" in err.value.message and "--retention-days 0.042" in err.value.hint
    with pytest.raises(ValidationError):
        q.gc(retention_days=(MIN_RETENTION_S - 60) / 86400)
    q.gc(retention_days=MIN_RETENTION_S / 86400)  # the minimum itself is accepted


def test_a_gc_whose_clock_runs_ahead_never_trims_a_seq_a_pusher_targets(make_peer, gc_clock_ahead):
    """The repro a interleaving with a legal retention: the gc machine's
    clock is two days ahead, so by its own clock the commits look old. Ages
    are measured on the server's clock, so nothing a pusher may still build
    on is trimmed, and the pusher's commit reaches every peer."""
    store = ServerClock()
    p, q = make_peer("p", store=store), make_peer("q", store=store, checkpoint_every=3)
    write(q, "files/base", b"base")
    q.push()                                   # seq 1
    p.pull()                                   # p's listing: the log continues from 1
    write(q, "files/q2", b"Q's commit 2")
    q.push()                                   # seq 2
    write(q, "files/q3", b"Q's commit 3")
    q.push()                                   # seq 3 and checkpoint 3
    gc_clock_ahead(2)
    assert q.gc(retention_days=1)["commitsDeleted"] == 0
    clock.set_clock(None)
    write(p, "files/p", b"P's work")
    assert p.push().head == 4                  # seq 2 was still there: p rebased
    r = make_peer("r", store=store)
    r.pull()
    q.pull()
    assert files(r)["files/p"] == files(q)["files/p"] == b"P's work"
    assert files(p) == files(q) == files(r)
    assert q.verify()["ok"]


def _orphan_scenario(make_peer, store):
    """p commits onto a seq that something (a gc of an older swamp, a hand)
    deleted while p still trusted its listing: create-only succeeds there.
    (A push now lists in its own operation before it creates; p trusts its
    earlier pull, as a push of an older swamp did.)"""
    p, q = make_peer("p"), make_peer("q", checkpoint_every=3)
    p.ctx.head_seen.listed_since = lambda state, since: p.ctx.head_seen.is_current(state)
    lagging = make_peer("lagging")
    write(q, "files/base", b"base")
    q.push()
    p.pull()
    lagging.pull()
    for i in (2, 3):
        write(q, f"files/q{i}", f"Q's commit {i}".encode())
        q.push()
    for seq in (1, 2):
        store.delete(f"default/log/{seq:020d}.json")
    write(p, "files/p", b"P's work")
    assert p.push().head == 2                  # on the trimmed seq
    return p, q, lagging


def test_a_commit_on_another_chain_is_refused_not_applied(make_peer, store):
    p, q, lagging = _orphan_scenario(make_peer, store)
    record = json.loads(store.get("default/log/00000000000000000002.json")[0])
    assert record["format"] == 3 and record["parentId"]  # it names the commit 1 p had pulled
    before = files(p)
    with pytest.raises(CorruptRemoteError) as err:
        p.pull()                               # Q's 3 extends Q's 2, not p's 2
    assert "broken at commit 3" in err.value.message
    assert files(p) == before and p.state.head == 2
    with pytest.raises(CorruptRemoteError):
        lagging.pull()                         # p's 2 then Q's 3: not one chain
    assert files(lagging) == {"files/base": b"base"}
    report = q.verify()
    assert not report["ok"]
    assert any("chain is broken at commit 3" in e for e in report["errors"])


def test_records_without_parent_ids_stay_readable(make_peer, store):
    """A record written by an older swamp (no ``format``, no ``parentId``)
    is applied as before, and the next commit names its id as parent."""
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/x", b"one")
    a.push()
    key = "default/log/00000000000000000002.json"
    old = {"seq": 2, "parent": 1, "id": "0123abcd" * 4, "writer": {"peer": "old"}, "time": "", "command": "",
           "changes": [{"path": "files/x", "op": "delete", "sha256": None, "size": 0}]}
    store.put(key, json.dumps(old).encode(), if_none_match=True)
    b.pull()
    assert files(b) == {}
    write(b, "files/y", b"two")
    b.push()
    assert json.loads(store.get("default/log/00000000000000000003.json")[0])["parentId"] == "0123abcd" * 4
    a.pull()
    assert files(a) == {"files/y": b"two"}
    assert a.verify()["ok"]
