"""What opening the sync engine costs every command on a shared datastore
(``datastore pull|push|sync``, ``data get``, method runs on S3): the modules
it loads, and the plain value classes that replaced dataclasses on that
path, which must behave as the dataclasses did."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys

import pytest

from swamp.datastore.sync.commitlog import Change, Commit
from swamp.datastore.sync.conflicts import Incoming
from swamp.datastore.sync.lease_scope import LeaseScope
from swamp.datastore.sync.journal import Taken
from swamp.datastore.sync.localtree import FileState
from swamp.datastore.sync.rules import NO_RULES, PathRules
from swamp.datastore.sync.scopes import Holding
from swamp.datastore.sync.state import Base, StatEntry

#: loaded only when something needs them: a lost race or a retry (random),
#: a failure to explain (diagnose), a warning to log (logging); ids come
#: from swamp.util.ids (not uuid), the threads from sync/pool.py (not
#: concurrent.futures, which imports logging)
NOT_ON_OPEN = ("dataclasses", "inspect", "uuid", "platform", "random", "swamp.datastore.objectstore.diagnose",
               "logging", "traceback", "concurrent.futures")


def test_opening_the_engine_on_s3_loads_none_of_the_lazy_modules(tmp_path):
    config = {"type": "s3", "bucket": "b", "prefix": "p", "endpoint_url": "http://127.0.0.1:9", "region": "us-east-1"}
    code = ("import json, sys\nfrom pathlib import Path\n"
            "from swamp.datastore.objectstore.factory import open_store\n"
            "from swamp.datastore.sync import SyncEngine\n"
            "from swamp.repo.datastores import path_rules\n"
            f"with SyncEngine(open_store(json.loads({json.dumps(json.dumps(config))})), Path(sys.argv[1]),\n"
            "                rules=path_rules(), peer='p') as e:\n"
            "    pass\n"
            f"print(json.dumps(sorted(m for m in {NOT_ON_OPEN!r} if m in sys.modules)))\n")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cache")], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert json.loads(out) == []


def test_change_is_a_frozen_value_whose_content_is_not_compared():
    a = Change("data/x", "put", "ab" * 32, 3, inline=b"abc")
    b = Change("data/x", "put", "ab" * 32, 3)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Change("data/x", "put", "ab" * 32, 4) and a != ("data/x", "put", "ab" * 32, 3)
    assert repr(a) == f"Change(path='data/x', op='put', sha256='{'ab' * 32}', size=3)"
    assert Change("p", "delete") == Change("p", "delete", None, 0)
    with pytest.raises(AttributeError):
        a.size = 4  # type: ignore[misc]
    for c in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert c == a and c.inline == b"abc"


def test_commit_compares_every_field_and_is_unhashable():
    c = Commit(1, 0, "id1", {"peer": "p"}, "t", "cmd", [Change("a", "put", "00" * 32, 1)])
    assert c.rejected == [] and c.leases == {} and c.parent_id is None and c.fence is None and c.upgrade is None
    d = Commit(1, 0, "id1", {"peer": "p"}, "t", "cmd", [Change("a", "put", "00" * 32, 1)])
    assert c == d and c != Commit(2, 0, "id1", {"peer": "p"}, "t", "cmd", [])
    d.rejected.append("x")
    assert c.rejected == [] and c != d  # defaults are not shared between instances
    with pytest.raises(TypeError):
        hash(c)
    assert repr(c).startswith("Commit(seq=1, parent=0, id='id1', writer={'peer': 'p'}, time='t', command='cmd', ")
    assert repr(c).endswith("leases={}, fence=None, upgrade=None)")
    assert pickle.loads(pickle.dumps(c)) == c


@pytest.mark.parametrize("value, same, other, text", [
    (Base("s", 1), Base("s", 1, True, ""), Base("s", 1, False), "Base(sha256='s', size=1, hydrated=True, src='')"),
    (StatEntry(1, 2, 3, "s", 4), StatEntry(1, 2, 3, "s", 4), StatEntry(1, 2, 3, "s", 5),
     "StatEntry(size=1, mtime_ns=2, ino=3, sha256='s', checked_ns=4)"),
    (FileState("s", 1), FileState("s", 1), FileState("t", 1), "FileState(sha256='s', size=1)"),
    (Incoming(Change("a", "delete"), 2, "p"), Incoming(Change("a", "delete"), 2, "p", ""),
     Incoming(Change("a", "delete"), 2, "p", "c"),
     "Incoming(change=Change(path='a', op='delete', sha256=None, size=0), seq=2, peer='p', commit='')"),
    (PathRules(("x/**",)), PathRules(("x/**",), (), (), ()), NO_RULES,
     "PathRules(immutable=('x/**',), lazy=(), mergeable=(), renumber=())"),
])
def test_frozen_values(value, same, other, text):
    assert value == same and hash(value) == hash(same) and value != other
    assert repr(value) == text
    with pytest.raises(AttributeError):
        value.size = 9
    assert pickle.loads(pickle.dumps(value)) == value and copy.copy(value) == value


def test_path_rules_are_checked_and_compiled_as_before():
    with pytest.raises(ValueError, match="unknown mergeable format"):
        PathRules(mergeable=(("a/*.x", "toml"),))
    r = pickle.loads(pickle.dumps(PathRules(immutable=("v/{int}/*",), mergeable=(("m/*.json", "json"),))))
    assert r.classify("v/3/raw").value == "immutable" and r.mergeable_format("m/a.json") == "json"


@pytest.mark.parametrize("cls, args, text", [
    (Holding, ("l", "n", "h", 1), "Holding(name='l', nonce='n', host='h', pid=1, machine=None, written=set(), "
                                  "published=[], path=None)"),
    (LeaseScope, (), "LeaseScope(written=set(), aside=None, published=[], file=None)"),
    (Taken, (), "Taken(files=[], paths=set(), bulk=False)"),
])
def test_mutable_values(cls, args, text):
    a, b = cls(*args), cls(*args)
    assert a == b and repr(a) == text
    a.published.append(1) if hasattr(a, "published") else a.paths.add("x")
    assert a != b  # defaults are not shared between instances
    with pytest.raises(TypeError):
        hash(a)
