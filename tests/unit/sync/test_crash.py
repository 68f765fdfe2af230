"""S6: kill -9 at any instant of a push (including its rebase pull) leaves
cache and remote consistent; a rerun converges; no file is torn or lost.
Each kill point runs in its own process, over a LocalDirObjectStore."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.util.atomic import atomic_write
from swamp.repo.datastores import path_rules

from .conftest import files

DRIVER = Path(__file__).with_name("crash_driver.py")
ROOT = Path(__file__).resolve().parents[3]
LOCKFILE = "extensions/lockfile.json"
#: every content any peer writes in the scenario: whatever a reader finds must be one of them
CONTENTS: set[bytes] = set()


def _w(e: SyncEngine, rel: str, data: bytes) -> None:
    CONTENTS.add(data)
    e.mark_dirty(rel)
    atomic_write(e.root / rel, data)


def _rm(e: SyncEngine, rel: str) -> None:
    e.mark_dirty(rel)
    (e.root / rel).unlink()


def _lock(keys: list[str]) -> bytes:
    return json.dumps({"extensions": {k: {"version": "1"} for k in keys}}).encode()


def _scenario(d: Path) -> None:
    """a's cache holds unpushed work made on a base that b has moved on from."""
    store = LocalDirObjectStore(d / "objects")
    with SyncEngine(store, d / "a", rules=path_rules(), peer="a") as a, SyncEngine(store, d / "b", rules=path_rules(), peer="b") as b:
        for rel in ("files/a-edits", "files/b-edits", "files/a-deletes", "files/b-deletes"):
            _w(a, rel, f"original {rel}".encode())
        _w(a, LOCKFILE, _lock(["base"]))
        _w(a, "data/acme-c/m1/count/1/raw", b"v1")
        a.push("seed")
        b.pull()
        _w(b, "files/b-edits", b"edited by b")
        _rm(b, "files/b-deletes")
        _w(b, LOCKFILE, _lock(["base", "from-b"]))
        b.push("b one")
        _w(b, "data/acme-c/m1/count/2/raw", b"v2 by b")
        _w(b, "data/acme-c/m1/count/2/metadata.yaml", b"version: 2\n")
        b.push("b two")
        _w(a, "files/a-edits", b"edited by a")
        _rm(a, "files/a-deletes")
        _w(a, LOCKFILE, _lock(["base", "from-a"]))
        for i in range(5):
            _w(a, f"files/new/{i}", f"new {i % 3}".encode())  # some identical contents
        _w(a, "data/acme-c/m1/other/1/raw", b"a's other data")


def _run_driver(d: Path, kill_at: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, str(DRIVER), str(d / "objects"), str(d / "a"), "a", str(kill_at)],
                          capture_output=True, text=True, env=env, timeout=120)


def _no_torn_files(e: SyncEngine) -> None:
    for rel, data in files(e).items():
        if rel == LOCKFILE:
            json.loads(data)
        else:
            assert data in CONTENTS, f"{rel} holds bytes nobody wrote: {data[:40]!r}"


def _recover(d: Path) -> dict[str, bytes]:
    store = LocalDirObjectStore(d / "objects")
    with SyncEngine(store, d / "a", rules=path_rules(), peer="a") as a, SyncEngine(store, d / "b", rules=path_rules(), peer="b") as b:
        _no_torn_files(a)
        a.sync()  # the rerun: raises if anything conflicted
        b.sync()
        a.pull()
        assert files(a) == files(b)
        assert a.status()["dirtyFiles"] == [] and b.status()["dirtyFiles"] == []
        assert a.verify()["ok"]
        assert a.push().requests == 0 and a.sync().requests == 1
        left = [p for p in a.root.rglob(".tmp-*") if ".sync" not in p.parts]
        assert left == [], f"temp files left behind: {left}"
        return files(a)


def test_kill_at_every_point_of_a_push(tmp_path):
    template = tmp_path / "template"
    _scenario(template)
    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    done = _run_driver(clean, 0)
    assert done.returncode == 0, done.stderr
    total = json.loads(done.stdout)["steps"]
    expected = _recover(clean)
    assert json.loads(expected[LOCKFILE])["extensions"].keys() == {"base", "from-a", "from-b"}
    assert expected["files/b-edits"] == b"edited by b" and expected["files/a-edits"] == b"edited by a"
    assert "files/a-deletes" not in expected and "files/b-deletes" not in expected

    want = total if os.environ.get("CI") == "true" else 24
    points = sorted({round(1 + i * (total - 1) / (want - 1)) for i in range(want)})
    assert len(points) >= 20 and total >= 40, f"only {total} steps"

    def one(k: int) -> None:
        d = tmp_path / f"kill-{k}"
        shutil.copytree(template, d)
        r = _run_driver(d, k)
        assert r.returncode == 137, f"kill point {k}: rc {r.returncode}\n{r.stderr}"
        got = _recover(d)
        assert got == expected, f"kill point {k} converged elsewhere"
        shutil.rmtree(d)

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, points))
