"""The small value classes of a method run (util/plain.Plain instead of
@dataclass, which costs a run's start-up): they read, compare, copy and
pickle as the dataclasses did."""

from __future__ import annotations

import copy
import pickle

import pytest

from swamp.models.context import Artifact, RunInfo
from swamp.models.registry import LoadError
from swamp.models.runner import Prepared


def test_they_read_and_compare_like_dataclasses():
    a = Artifact("log", "log", 2, "file")
    assert a == Artifact("log", "log", 2, "file") and a != Artifact("log", "log", 3, "file")
    assert repr(a) == "Artifact(name='log', specName='log', version=2, kind='file')"
    assert a.to_json() == {"name": "log", "specName": "log", "version": 2, "kind": "file"}
    assert str(LoadError("x.py", 3, "boom")) == "x.py:3: boom"
    assert LoadError("x.py", None, "boom") == LoadError("x.py", None, "boom")


def test_run_info_defaults_are_fresh():
    a, b = RunInfo("o1", "execute"), RunInfo(output_id="o2", method="execute")
    a.tags["k"] = "v"
    a.overrides["s"] = {}
    assert b.tags == {} and b.overrides == {} and b.ephemeral is None and b.workflow_run_id is None


def test_a_prepared_run_is_read_only_and_travels():
    p = Prepared({"name": "m"}, None, "execute", {"run": "true"}, {})
    with pytest.raises(AttributeError):
        p.method = "other"
    for twin in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert twin == p and twin.args == {"run": "true"}
    r = RunInfo("o1", "execute", tags={"a": "b"})
    assert pickle.loads(pickle.dumps(r)) == r
