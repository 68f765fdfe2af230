"""A lease's heartbeat or release refused although the lease is still ours.

Two real causes, both seen against object stores: a SeaweedFS S3 gateway
checks If-Match against a view its filer's change feed keeps, which can lag
the write just made (a CI run of the contract suite on the cluster caught a
412 on the ETag a put had just returned); and a conditional write whose
answer was lost is retried by the store layer, whose retry then meets the
ETag the first attempt made. Either way the lease still carries our nonce:
it must not be reported lost (a run failing with lease_lost, or a lease left
behind for a whole ttl), while a peer that really took it over still wins.
"""

from __future__ import annotations

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync.layout import Layout
from swamp.datastore.sync.lease import Lease, read_lease
from swamp.errors import PreconditionFailed

NAME = "model-x"


class LaggingGateway(MemoryObjectStore):
    """Refuses the next ``refusals`` conditional writes as a lagging view
    would, before looking at them; ``apply_first`` makes the write happen
    and still answers 412 (a retry meeting its own first attempt)."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 0
        self.apply_first = False

    def _refuse(self, write):
        if self.refusals:
            self.refusals -= 1
            if self.apply_first:
                write()
            raise PreconditionFailed("precondition failed (a lagging gateway)")
        return write()

    def put(self, key, data, *, if_none_match=False, if_match=None):
        if if_match is None:
            return super().put(key, data, if_none_match=if_none_match)
        return self._refuse(lambda: super(LaggingGateway, self).put(key, data, if_match=if_match))

    def delete(self, key, *, if_match=None):
        if if_match is None:
            return super().delete(key)
        return self._refuse(lambda: super(LaggingGateway, self).delete(key, if_match=if_match))


def _lease(store) -> Lease:
    return Lease(store, Layout("default"), NAME, peer="A", ttl_ms=60_000, sleep=lambda s: None)


def test_a_heartbeat_refused_by_a_lagging_view_keeps_the_lease():
    store = LaggingGateway()
    lease = _lease(store).acquire()
    try:
        store.refusals = 2
        assert lease.renew() is True
        assert not lease.lost
        held, etag = read_lease(store, lease.key)
        assert held["nonce"] == lease.nonce and etag == lease.etag  # the next beat matches
        assert lease.renew() is True
    finally:
        lease.release()


def test_a_heartbeat_whose_first_try_landed_adopts_the_etag_it_made():
    store = LaggingGateway()
    lease = _lease(store).acquire()
    try:
        store.refusals, store.apply_first = 1, True
        assert lease.renew() is True and not lease.lost
        assert read_lease(store, lease.key)[1] == lease.etag
    finally:
        lease.release()


def test_a_release_refused_by_a_lagging_view_still_lets_the_lease_go():
    store = LaggingGateway()
    lease = _lease(store).acquire()
    store.refusals = 1
    lease.release()
    assert not lease.lost
    assert store.head(lease.key) is None  # not left behind for a whole ttl


def test_a_lease_another_peer_took_over_is_still_lost():
    store = LaggingGateway()
    lease = _lease(store).acquire()
    _, etag = read_lease(store, lease.key)
    MemoryObjectStore.put(store, lease.key, b'{"nonce": "someone-else"}', if_match=etag)  # a taker
    assert lease.renew() is False and lease.lost and lease.lost_reason == "taken over"
    lease.release()
    assert read_lease(store, lease.key)[0]["nonce"] == "someone-else"  # the taker's lease stays


def test_a_view_that_keeps_refusing_our_etag_ends_in_a_lost_lease_not_a_hang():
    store = LaggingGateway()
    lease = _lease(store).acquire()
    store.refusals = 100
    assert lease.renew() is False and lease.lost
