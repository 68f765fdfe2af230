"""swamp's random waits (retry backoff, a lost commit race, lease polls)
never draw from the random module's shared generator: a model's code that
seeded it for a repeatable sequence gets that sequence, whatever swamp's
retries and lease waits do meanwhile, in its thread or another."""

from __future__ import annotations

import random

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.sync import records
from swamp.datastore.sync.layout import Layout
from swamp.datastore.sync.lease import Lease
from swamp.errors import LockTimeoutError
from swamp.util import jitter


def test_a_seeded_sequence_is_the_same_whatever_swamp_waits_meanwhile():
    random.seed(1234)
    alone = [random.random() for _ in range(3)]

    random.seed(1234)
    first = random.random()
    store = RetryingObjectStore(MemoryObjectStore())
    delays = [store._delay(attempt) for attempt in range(5)]
    races = [records.jitter(0.5) for _ in range(5)]
    held = Lease(MemoryObjectStore(), Layout("default"), "model/acme/thing/1", peer="a", timeout_ms=60_000)
    rival = Lease(held.store, Layout("default"), "model/acme/thing/1", peer="b", timeout_ms=150)
    with held:
        with pytest.raises(LockTimeoutError):
            rival.acquire()  # polls with backoff until its 150 ms are up
    assert [first, random.random(), random.random()] == alone
    assert all(0 < d for d in delays) and all(0 <= r <= 0.5 for r in races)


def test_waits_are_spread_over_their_whole_range():
    draws = [jitter.uniform(0.5, 1.5) for _ in range(2000)]
    assert all(0.5 <= d < 1.5 for d in draws)
    assert min(draws) < 0.6 and max(draws) > 1.4  # not stuck at one end
    assert len(set(draws)) > 1990  # not a handful of values
