"""Review (round after e212c4b, 582bcc3): nothing written under a lost
lease is published (docs/sync.md "Leases", "Fencing at the commit point").

Hole: both halves of that rule live in the process that holds the lease:
which paths were written under which holding (held.py / fencing.py
`_leases`), and a commit naming its holdings so the log's fence refuses it
(`_leases_of`). Another process on the same checkout (a `swamp datastore
sync` in a second terminal, serve beside a CLI command) pushes everything
the shared journal names, knows none of those holdings, and commits the
work of a holder whose lease was taken over under no lease name: the fence
does not apply and every peer takes it. The same goes for a version a pull
in that other process renumbers (582bcc3 follows moves only in the process
that holds the lease)."""

from __future__ import annotations

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.errors import LeaseLostError
from swamp.repo.datastores import path_rules
from swamp.util.atomic import atomic_write

LEASE = "model/acme/thing/123"
REL = "data/acme/thing/123/out/1/raw"


def test_what_a_holder_wrote_under_a_lease_taken_over_is_not_published_by_another_process(tmp_path):
    store = MemoryObjectStore()
    holder = SyncEngine(store, tmp_path / "a", rules=path_rules(), peer="a", concurrency=2)
    beside = SyncEngine(store, tmp_path / "a", rules=path_rules(), peer="a", concurrency=2)  # same checkout
    taker = SyncEngine(store, tmp_path / "b", rules=path_rules(), peer="b", concurrency=2)
    fresh = SyncEngine(store, tmp_path / "fresh", rules=path_rules(), peer="fresh", concurrency=2)
    try:
        try:
            with holder.lease(LEASE):
                holder.pull()
                holder.mark_dirty(REL)
                atomic_write(holder.root / REL, b"a's version 1, written under its lease")
                assert taker.force_release_lease(LEASE)  # taken from a holder that was only slow: fenced
                beside.sync()  # `swamp datastore sync` in another terminal of the same checkout
                holder.push()
        except LeaseLostError:
            pass  # the holder is told; what matters is what the others see
        fresh.pull()
        assert not (fresh.root / REL).exists(), "published although its lease was taken over"
    finally:
        for e in (holder, beside, taker, fresh):
            e.close()
