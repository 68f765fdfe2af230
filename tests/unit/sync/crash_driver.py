"""Run one push of a prepared cache and die with os._exit(137) at step k.

A step is: just before and just after every object-store call, every local
file write/delete/rename and directory sync, every state transaction and
journal update. So
"after" a PUT is the lost-answer case: the write landed, the process never
learnt it. Prints the number of steps when it runs to the end.

usage: crash_driver.py STORE_DIR CACHE_DIR PEER KILL_AT   (KILL_AT 0: never)
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from pathlib import Path

from swamp.datastore.objectstore.base import ObjectStore
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.journal import Journal
from swamp.datastore.sync.localtree import LocalTree
from swamp.datastore.sync.state import SyncState
from swamp.util.atomic import DurableBatch
from swamp.repo.datastores import path_rules

KILL_AT = int(sys.argv[4])
_steps = 0


def step() -> None:
    global _steps
    _steps += 1
    if _steps == KILL_AT:
        os._exit(137)


def around(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        step()
        try:
            return fn(*args, **kwargs)
        finally:
            step()
    return wrapper


class Killing(ObjectStore):
    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.name = inner.name

    get = property(lambda self: around(self.inner.get))
    put = property(lambda self: around(self.inner.put))
    head = property(lambda self: around(self.inner.head))
    delete = property(lambda self: around(self.inner.delete))

    def list(self, prefix="", start_after=None):
        step()
        out = list(self.inner.list(prefix, start_after))
        step()
        return iter(out)


for cls, names in ((LocalTree, ("write", "remove", "move_aside")), (DurableBatch, ("sync",)),
                   (Journal, ("append", "take", "done"))):
    for name in names:
        setattr(cls, name, around(getattr(cls, name)))
_transaction = SyncState.transaction


@contextlib.contextmanager
def _killing_transaction(self):
    step()
    with _transaction(self):
        yield
    step()


SyncState.transaction = _killing_transaction

if __name__ == "__main__":
    engine = SyncEngine(Killing(LocalDirObjectStore(sys.argv[1])), Path(sys.argv[2]), rules=path_rules(), peer=sys.argv[3],
                        concurrency=1)
    engine.push("crash test")
    print(json.dumps({"steps": _steps}))
