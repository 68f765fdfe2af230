"""A store that does not answer: tried a few times only, each retry after a
long wait announced on stderr, and the timeout configurable per datastore
(docs/sync.md "Timeouts")."""

from __future__ import annotations

import pytest

from swamp.datastore.cached import store_config
from swamp.datastore.objectstore.base import ObjectStore, TransientError
from swamp.datastore.objectstore.no_answer import no_answer
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.objectstore import retry as retry_module
from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.errors import SwampError
from swamp.repo.config_read import read_config


class Silent(ObjectStore):
    """Every request 'waits' its whole timeout, then reports no answer."""

    name = "s3://b/"

    def __init__(self) -> None:
        self.calls = 0

    def _silent(self):
        self.calls += 1
        raise no_answer("s3://b at http://127.0.0.1:9 did not answer within 5 s (HEAD k)")

    def get(self, key):
        self._silent()

    def put(self, key, data, *, if_none_match=False, if_match=None):
        self._silent()

    def head(self, key):
        self._silent()

    def list(self, prefix="", start_after=None):
        self._silent()
        yield  # pragma: no cover

    def delete(self, key, *, if_match=None):
        self._silent()


def test_a_silent_store_is_tried_three_times_not_five_and_each_retry_is_announced(monkeypatch):
    clock = iter(range(0, 1000, 5))  # every try takes 5 s
    monkeypatch.setattr(retry_module.time, "monotonic", lambda: next(clock))
    lines: list[str] = []
    inner = Silent()
    store = RetryingObjectStore(inner, attempts=5, sleep=lambda s: None, notice=lines.append)
    with pytest.raises(TransientError, match="127.0.0.1:9 did not answer within 5 s"):
        store.head("k")
    assert inner.calls == 3
    assert lines == ["s3://b at http://127.0.0.1:9 did not answer within 5 s (HEAD k); trying again (2 of at most 3)",
                     "s3://b at http://127.0.0.1:9 did not answer within 5 s (HEAD k); trying again (3 of at most 3)"]
    with pytest.raises(TransientError):
        list(store.list("p/"))
    assert inner.calls == 6


def test_quick_transient_failures_keep_all_their_tries_and_say_nothing():
    class Busy(MemoryObjectStore):
        failures = 4

        def head(self, key):
            if self.failures:
                self.failures -= 1
                raise TransientError("503")
            return super().head(key)

    lines: list[str] = []
    store = RetryingObjectStore(Busy(), attempts=5, sleep=lambda s: None, notice=lines.append)
    assert store.head("k") is None
    assert lines == []


def _config(**datastore):
    return read_config({"swampVersion": "0.1.0", "initializedAt": "2026-01-01T00:00:00Z", "repoId": "r",
                        "datastore": {"type": "s3", "bucket": "b", **datastore}}, ".swamp.yaml")


def test_network_timeout_in_the_datastore_settings_reaches_the_store():
    assert "response_timeout_s" not in store_config(_config().datastore)  # the store's default, 5 s
    cfg = store_config(_config(networkTimeout=2).datastore)
    assert cfg["connect_timeout_s"] == cfg["response_timeout_s"] == 2.0


@pytest.mark.parametrize("value", [0, -1, "soon", True, 100000])
def test_a_bad_network_timeout_is_refused_with_the_field_named(value):
    with pytest.raises(SwampError) as caught:
        _config(networkTimeout=value)
    assert "networkTimeout" in caught.value.message
