"""The three holes the stateful property test found (issue 9), each as a
deterministic scenario at the engine: the property test keeps its own
minimal reproduction of each (tests/property/test_sync_stateful.py).

1. A data version of ours renumbered (a peer published its number first)
   while the lease it was written under is lost: it stays under that lease,
   so it is taken back with the rest, never published under its new number.
2. A push that trusts a recent listing (the head-is-current rule) onto a
   remote that was emptied and set up again meanwhile: refused with
   ``remote_changed``, the remote left as the other peer made it.
3. Conflict copies after a remote reset: seqs start again, but a copy's
   name carries the incoming commit's id, so a second conflict on the same
   path never overwrites the first copy.
"""

from __future__ import annotations

import pytest

from swamp.datastore.sync import identity
from swamp.datastore.sync.localonly import CONFLICT_COPY_RE, is_conflict_copy
from swamp.errors import CorruptRemoteError, LeaseLostError, RemoteChangedError, SyncConflictError

from .conftest import files, read, write

LEASE = "model/acme/thing/123"
VERSIONS = "data/acme/thing/123/out"


def _log_bodies(store) -> list[bytes]:
    return [body for key, (body, *_rest) in sorted(store._objects.items()) if "/log/" in key]


def _empty(store) -> None:
    for key in list(store._objects):
        store.delete(key)


# ---------------------------------------------- 1. renumbered out of quarantine


def test_a_version_renumbered_while_its_lease_is_lost_is_taken_back_not_published(make_peer, store):
    """Holder a writes version 1 under the model's lease and stops at its
    commit point; meanwhile b breaks the lease (fencing a's holding in the
    log), takes it and publishes its own version 1. a's commit then loses
    the race, its pull renumbers a's version 1 to 2 (b's took the number)
    and shows the fence: a's version 2 must be taken back to
    .sync/lost-lease/ like everything else written under the lease, and no
    later sync publishes it."""
    a, b = make_peer("a"), make_peer("b")
    add_pending = a.state.add_pending

    def frozen_at_commit_point(commit_id, seq):
        a.state.add_pending = add_pending  # once
        assert b.force_release_lease(LEASE)
        with b.lease(LEASE):
            b.pull()
            write(b, f"{VERSIONS}/1/raw", b"b's version 1")
            b.push()
        return add_pending(commit_id, seq)

    with pytest.raises(LeaseLostError):
        with a.lease(LEASE):
            a.pull()
            write(a, f"{VERSIONS}/1/raw", b"a's version 1")
            a.state.add_pending = frozen_at_commit_point
            a.push()
    a.sync()
    b.sync()
    assert not any(b"a's version 1" in body for body in _log_bodies(store)), "published under a lost lease"
    assert files(a) == files(b) == {f"{VERSIONS}/1/raw": b"b's version 1"}
    kept = [p for p in (a.root / ".sync" / "lost-lease").rglob("raw")]
    assert [p.read_bytes() for p in kept] == [b"a's version 1"]


# ---------------------------------------- 2. a push trusting a recent listing


def test_a_push_trusting_its_last_commit_is_refused_on_a_remote_emptied_and_set_up_again(make_peer, store):
    a, c, fresh = make_peer("a"), make_peer("c"), make_peer("fresh")
    write(a, "files/a", b"a")
    a.push()
    write(a, "files/b", b"b")
    a.push()  # head 2: the listing (its own commit) is trusted for a while
    _empty(store)
    write(c, "files/c", b"c")
    c.push()  # another peer sets the emptied remote up again: its log/1
    before = _log_bodies(store)
    write(a, "files/d", b"d")
    with pytest.raises(RemoteChangedError) as err:
        a.push()
    assert "swamp datastore setup" in err.value.hint
    assert _log_bodies(store) == before, "a published onto a remote that was emptied since"
    fresh.pull()  # the remote is usable for everyone: no gap, no foreign link
    assert files(fresh) == {"files/c": b"c"}
    # attaching again republishes what a has, and nothing is lost
    identity.attach(a.state, a.store, a.layout)
    a.pull()
    a.push(full_walk=True)
    fresh.pull()
    assert files(fresh) == {"files/a": b"a", "files/b": b"b", "files/c": b"c", "files/d": b"d"}


def test_a_push_trusting_its_last_commit_is_refused_on_a_remote_just_emptied(make_peer, store):
    a, fresh = make_peer("a"), make_peer("fresh")
    write(a, "files/a", b"a")
    a.push()
    _empty(store)
    write(a, "files/b", b"b")
    with pytest.raises(RemoteChangedError):
        a.push()
    assert _log_bodies(store) == []
    try:
        fresh.pull()
    except CorruptRemoteError as err:  # a log starting at commit 2
        raise AssertionError(f"the emptied remote was left unusable: {err}") from err


# --------------------------------------------- 3. conflict copies never repeat


def _attach(e) -> None:
    """What `datastore setup` does: the identity, then a pull and a full push."""
    e.init_remote()
    identity.attach(e.state, e.store, e.layout)
    try:
        e.pull()
    except SyncConflictError:
        pass
    e.push(full_walk=True)


def _copies(e) -> dict[str, bytes]:
    return {r: read(e, r) for r in e.tree.walk() if is_conflict_copy(r)}


def test_a_second_conflict_on_a_path_after_a_remote_reset_keeps_the_first_copy(make_peer, store):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/n", b"a's first")
    _attach(a)                       # commit 1
    write(b, "files/n", b"b's own")
    _attach(b)                       # conflict on commit 1: b's own kept aside
    first = _copies(b)
    assert list(first.values()) == [b"b's own"]
    _empty(store)                    # the remote is reset: seqs start again
    write(a, "files/n", b"a's second")
    _attach(a)                       # commit 1 again, another commit
    _attach(b)                       # conflict on commit 1 again: a's first kept aside
    copies = _copies(b)
    assert sorted(copies.values()) == [b"a's first", b"b's own"], copies
    assert read(b, "files/n") == b"a's second"
    for name in copies:
        m = CONFLICT_COPY_RE.match(name)
        assert m["path"] == "files/n" and m["peer"] == "b" and m["seq"] == "1" and len(m["id"]) == 12


def test_conflict_copy_names_old_and_new_are_both_recognised() -> None:
    old = CONFLICT_COPY_RE.match("files/a.txt.conflict-laptop-ab12cd34-7")
    new = CONFLICT_COPY_RE.match("files/a.txt.conflict-laptop-12345678-7-0123456789ab")
    assert (old["path"], old["peer"], old["seq"], old["id"]) == ("files/a.txt", "laptop-ab12cd34", "7", None)
    assert (new["path"], new["peer"], new["seq"], new["id"]) == ("files/a.txt", "laptop-12345678", "7",
                                                                 "0123456789ab")
    assert is_conflict_copy("files/a.txt.conflict-laptop-ab12cd34-7")
    assert not is_conflict_copy("files/a.txt.conflict-notes")
