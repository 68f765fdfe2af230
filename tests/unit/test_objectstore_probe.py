"""The S7 probe on stores that enforce conditions, and on stores that break
each one of them in turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from swamp.datastore.objectstore.base import ObjectStore
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.objectstore.probe import probe_conditional_writes
from swamp.errors import BackendRefused


class Broken(MemoryObjectStore):
    """An in-memory store with one deliberate flaw."""

    def __init__(self, flaw: str) -> None:
        super().__init__(name=f"broken-{flaw}://bucket/")
        self.flaw = flaw

    def put(self, key, data, *, if_none_match=False, if_match=None) -> str:  # type: ignore[no-untyped-def]
        if self.flaw == "ignores-if-none-match":
            if_none_match = False
        if self.flaw == "ignores-stale-if-match" and key in self._objects:
            if_match = None
        if self.flaw == "creates-on-if-match" and if_match is not None and key not in self._objects:
            if_match = None
        if self.flaw == "refuses-current-etag" and if_match is not None:
            if_match = "never"
        return super().put(key, data, if_none_match=if_none_match, if_match=if_match)


@pytest.mark.parametrize("store", [MemoryObjectStore(), None], ids=["memory", "local"])
def test_enforcing_stores_pass_and_are_cleaned_up(store: ObjectStore | None, tmp_path: Path) -> None:
    store = store or LocalDirObjectStore(tmp_path)
    probe_conditional_writes(store)
    assert list(store.list()) == []


@pytest.mark.parametrize("flaw, check", [
    ("ignores-if-none-match", "second create-only write"),
    ("ignores-stale-if-match", "stale ETag succeeded"),
    ("creates-on-if-match", "missing key succeeded"),
    ("refuses-current-etag", "current ETag was refused"),
])
def test_a_store_with_a_flaw_is_refused_by_name_and_check(flaw: str, check: str) -> None:
    store = Broken(flaw)
    with pytest.raises(BackendRefused) as info:
        probe_conditional_writes(store)
    assert store.name in info.value.message
    assert check in info.value.message
    assert info.value.code == "backend_refused"
    assert list(store.list()) == []  # the scratch keys are gone even on failure
