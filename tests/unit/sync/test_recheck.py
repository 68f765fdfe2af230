"""A pull never replaces a file that changed since it decided to (issue 9
item 2, repro c_pull_overwrites_concurrent_write): another process on the
same checkout writes (or edits) the file while the pull downloads; the pull
checks each path again right before its rename or delete, keeps both, and
reports a conflict.

The processes are real and separate; they take turns through marker files
(the pull's blob download waits until the writer has written), so the
interleaving is the same on every run without any timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SRC = HERE.parents[3] / "src"


class GatedStore:
    """A store whose blob downloads announce themselves (``downloading``)
    and then wait for ``written``: the pull has decided, and not renamed yet."""

    def __init__(self, inner, gate: Path) -> None:
        self.inner, self.name, self.gate = inner, inner.name, gate

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def get(self, key):
        if "/blobs/" in key:
            (self.gate / "downloading").touch()
            deadline = time.monotonic() + 60
            while not (self.gate / "written").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return self.inner.get(key)


def _engine(root: Path, cache: str, gated: bool = False):
    from swamp.datastore.objectstore.local import LocalDirObjectStore
    from swamp.datastore.sync import SyncEngine
    from swamp.repo.datastores import path_rules

    store = LocalDirObjectStore(root / "remote")
    if gated:
        store = GatedStore(store, root)
    return SyncEngine(store, root / cache, rules=path_rules(), peer=cache, concurrency=2, inline_max=0)


def _role(what: str, root: Path, cache: str, *rest: str) -> None:
    from swamp.errors import SyncConflictError
    from swamp.util.atomic import atomic_write

    if what == "pull":                   # `datastore sync` in one process
        e = _engine(root, cache, gated=True)
        try:
            c = e.pull()
        except SyncConflictError as err:
            c = err.counts
        print(json.dumps(c.to_json()))
    elif what == "write":                # a command writing in the same checkout
        deadline = time.monotonic() + 60
        while not (root / "downloading").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        e = _engine(root, cache)
        e.mark_dirty(rest[0])
        atomic_write(e.root / rest[0], rest[1].encode())
        (root / "written").touch()
    e.close()


def _spawn(*args: str) -> subprocess.Popen:
    env = {**os.environ, "SWAMP_FSYNC": "0", "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, str(HERE), *map(str, args)], env=env, stdout=subprocess.PIPE, text=True)


def _race(root: Path, rel: str, edit: str) -> dict:
    pull = _spawn("pull", root, "C")
    writer = _spawn("write", root, "C", rel, edit)
    assert writer.wait(120) == 0
    out, _ = pull.communicate(timeout=120)
    assert pull.returncode == 0
    return json.loads(out)


def _setup(tmp_path: Path, rel: str, first: bytes):
    from tests.unit.sync.conftest import write

    q, c = _engine(tmp_path, "Q"), _engine(tmp_path, "C")
    write(q, rel, first)
    q.push()
    c.pull()
    c.close()
    return q


def test_a_write_landing_while_a_pull_downloads_is_kept_and_reported(tmp_path):
    from tests.unit.sync.conftest import write

    q = _setup(tmp_path, "files/doc", b"v1")
    write(q, "files/doc", b"Q's v2")
    q.push()
    report = _race(tmp_path, "files/doc", "user's edit")
    cache = tmp_path / "C" / "files"
    assert (cache / "doc").read_bytes() == b"Q's v2"
    [conflict] = report["conflicts"]
    assert conflict["path"] == "files/doc" and conflict["savedAs"]
    assert (tmp_path / "C" / conflict["savedAs"]).read_bytes() == b"user's edit"
    q.close()


def test_an_edit_landing_while_a_pull_deletes_is_kept_and_reported(tmp_path):
    from tests.unit.sync.conftest import delete, write

    q = _setup(tmp_path, "files/doc", b"v1")
    write(q, "files/other", b"makes the pull download something")
    delete(q, "files/doc")
    q.push()
    report = _race(tmp_path, "files/doc", "user's edit")
    [conflict] = report["conflicts"]
    assert conflict["path"] == "files/doc" and conflict["theirs"] == "delete"
    assert (tmp_path / "C" / conflict["savedAs"]).read_bytes() == b"user's edit"
    q.close()


if __name__ == "__main__":
    _role(sys.argv[1], Path(sys.argv[2]), sys.argv[3], *sys.argv[4:])
