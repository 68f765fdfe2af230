"""A leftover version beside a lost lease (issue 24's property-test find).

A version written before a command took its model's lease (an older run's,
whose own push failed) is not written under that lease. When the lease is
then lost and a peer's version takes the leftover's number, the pull
renumbers ours highest first: the leased version leaves its number, and the
leftover moves onto the very path the leased one left. The leftover must
not be taken back with the lost lease's work (it was never under it, and
the warning would say it was): it stays ours, unpublished, and the next sync
publishes it at its new number. Only the leased version goes to
``.sync/lost-lease/``. Both when the holder's own push renumbers, and when
another process on the same cache does (the holding's scope file).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.errors import LeaseLostError
from swamp.repo.datastores import path_rules

from .conftest import files, write

LEASE = "model/acme/thing/123"
VERSIONS = "data/acme/thing/123/out"


def _kept_aside(e: SyncEngine) -> dict[str, bytes]:
    """What the cache kept in .sync/lost-lease/, by path below the holding's folder."""
    out = {}
    for p in (e.root / ".sync" / "lost-lease").rglob("raw"):
        holding_dir = p.relative_to(e.root / ".sync" / "lost-lease").parts[0]
        out[p.relative_to(e.root / ".sync" / "lost-lease" / holding_dir).as_posix()] = p.read_bytes()
    return out


def _log_bodies(store) -> list[bytes]:
    return [store.get(m.key)[0] for m in store.list("") if "/log/" in m.key]


def test_a_leftover_renumbered_onto_a_lost_lease_path_is_published_not_taken_back(make_peer, store):
    a, b, fresh = make_peer("a"), make_peer("b"), make_peer("fresh")
    write(a, f"{VERSIONS}/1/raw", b"a's leftover")  # an older run's, never pushed
    add_pending = a.state.add_pending

    def frozen_at_commit_point(commit_id, seq):
        a.state.add_pending = add_pending  # once
        assert b.force_release_lease(LEASE)
        with b.lease(LEASE):
            b.pull()
            write(b, f"{VERSIONS}/1/raw", b"b's version 1")
            b.push()
        return add_pending(commit_id, seq)

    with pytest.raises(LeaseLostError) as err:
        with a.lease(LEASE):
            a.pull()
            write(a, f"{VERSIONS}/2/raw", b"a's version under the lease")
            a.state.add_pending = frozen_at_commit_point
            a.push()
    assert ".sync/lost-lease/" in (err.value.hint or "")
    # only the leased version is kept aside (moved from 2 to 3 before it was taken back)
    assert _kept_aside(a) == {f"{VERSIONS}/3/raw": b"a's version under the lease"}
    a.sync()  # the leftover is published, at the number after b's
    fresh.pull()
    assert files(fresh) == {f"{VERSIONS}/1/raw": b"b's version 1", f"{VERSIONS}/2/raw": b"a's leftover"}
    assert files(a) == files(fresh)
    assert not any(b"a's version under the lease" in body for body in _log_bodies(store))


def _engine(remote: Path, root: Path, peer: str) -> SyncEngine:
    return SyncEngine(LocalDirObjectStore(remote), root, rules=path_rules(), peer=peer, concurrency=2)


def test_a_leftover_another_process_renumbers_onto_a_lost_lease_path_is_published(tmp_path):
    """The same, when a `datastore sync` beside the holder on the same
    checkout does the renumbering: the holding's scope file must say the
    leased version's old path left the holding."""
    remote = tmp_path / "remote"
    holder, beside = _engine(remote, tmp_path / "a", "a"), _engine(remote, tmp_path / "a", "a")
    b, fresh = _engine(remote, tmp_path / "b", "b"), _engine(remote, tmp_path / "fresh", "fresh")
    try:
        write(holder, f"{VERSIONS}/1/raw", b"a's leftover")
        with pytest.raises(LeaseLostError):
            with holder.lease(LEASE):
                holder.pull()
                write(holder, f"{VERSIONS}/2/raw", b"a's version under the lease")
                assert b.force_release_lease(LEASE)
                with b.lease(LEASE):
                    b.pull()
                    write(b, f"{VERSIONS}/1/raw", b"b's version 1")
                    b.push("run")
                beside.sync("sync")  # renumbers a's 1 -> 2 and 2 -> 3, takes back 3
                holder.push("run")
        assert _kept_aside(holder) == {f"{VERSIONS}/3/raw": b"a's version under the lease"}
        holder.sync("sync")
        fresh.pull()
        assert files(fresh) == {f"{VERSIONS}/1/raw": b"b's version 1", f"{VERSIONS}/2/raw": b"a's leftover"}
        assert not any(b"a's version under the lease" in body
                       for body in _log_bodies(LocalDirObjectStore(remote)))
    finally:
        for e in (holder, beside, b, fresh):
            e.close()


def test_a_leftover_another_process_renumbers_while_the_lease_is_busy_is_not_taken_back_by_the_holder(tmp_path):
    """Another process's push renumbers (the leftover to 2, the leased
    version to 3) but cannot publish the leftover (the peer that took the
    lease over still holds it). The holder then finds its lease lost: it
    takes back what its holding's scope file says (3 now), not the path its
    own memory last saw (2, the leftover's now), and the next sync
    publishes the leftover."""
    remote = tmp_path / "remote"
    holder, beside = _engine(remote, tmp_path / "a", "a"), _engine(remote, tmp_path / "a", "a")
    b, fresh = _engine(remote, tmp_path / "b", "b"), _engine(remote, tmp_path / "fresh", "fresh")
    try:
        write(holder, f"{VERSIONS}/1/raw", b"a's leftover")
        with pytest.raises(LeaseLostError):
            with holder.lease(LEASE):
                holder.pull()
                write(holder, f"{VERSIONS}/2/raw", b"a's version under the lease")
                assert b.force_release_lease(LEASE)
                with b.lease(LEASE):
                    b.pull()
                    write(b, f"{VERSIONS}/1/raw", b"b's version 1")
                    b.push("run")
                    beside.push("another command")  # the lease is busy: the leftover waits
                holder.push("run")
        assert _kept_aside(holder) == {f"{VERSIONS}/3/raw": b"a's version under the lease"}
        holder.sync("sync")
        fresh.pull()
        assert files(fresh) == {f"{VERSIONS}/1/raw": b"b's version 1", f"{VERSIONS}/2/raw": b"a's leftover"}
    finally:
        for e in (holder, beside, b, fresh):
            e.close()
