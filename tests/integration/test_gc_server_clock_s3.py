"""gc on the object store's clock against a real S3 server (SeaweedFS),
issue 24 N2 and N3: the server's Last-Modified is the only clock two gc
runners compare. In this process a runner's wall clock is skewed with
``clock.set_clock``; a `swamp datastore gc` subprocess is skewed by
libfaketime (Debian's `faketime`), which also moves the time its S3
requests are signed with (SeaweedFS, like AWS, accepts 15 minutes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.clocks import server_now
from swamp.datastore.sync.gc import STALE_SWEEP_S, SWEEP_WINDOW_S
from swamp.datastore.sync.layout import Layout
from swamp.errors import SwampError
from swamp.repo.datastores import path_rules
from swamp.util import clock
from swamp.util.atomic import atomic_write
from swamp.util.digest import sha256_hex
from tests.helpers import PYTHON, _argv, _env, init_repo, ok, s3_setup_args

pytestmark = pytest.mark.s3


@pytest.fixture
def peers(seaweedfs, tmp_path: Path):
    prefix = seaweedfs.new_prefix()
    made: list[SyncEngine] = []

    def make(name: str, store=None) -> SyncEngine:
        e = SyncEngine(store or seaweedfs.store(prefix), tmp_path / name, rules=path_rules(), peer=name)
        made.append(e)
        return e

    make.prefix = prefix
    yield make
    clock.set_clock(None)
    for e in made:
        e.close()


def _seeded(peers) -> tuple[SyncEngine, str]:
    """A remote with one commit and an orphan blob (a killed push's) that a
    gc marked; returns the gc runner and the blob's key."""
    g = peers("G2")
    g.mark_dirty("files/seed")
    atomic_write(g.root / "files/seed", b"seed")
    g.push()
    key = g.layout.blob(sha256_hex(data := os.urandom(50_000)))
    g.store.put(key, data)
    assert g.gc(1)["blobsMarked"] == 1
    return g, key


def _marks(g: SyncEngine) -> dict:
    return json.loads(g.store.get(g.layout.gc_mark_key)[0])


def test_on_s3_a_gc_minutes_ahead_leaves_a_live_sweep_alone(peers, seaweedfs):
    """G1 is sweeping X (its delete held back); G2, 14 minutes ahead,
    refuses instead of erasing G1's sweep record."""
    g2, key = _seeded(peers)
    doc = _marks(g2)
    doc["blobs"] = {sha: t - 2 * 86400 for sha, t in doc["blobs"].items()}  # marked two days ago
    g2.store.put(g2.layout.gc_mark_key, json.dumps(doc).encode())
    g1_store = seaweedfs.store(peers.prefix)
    in_sweep, go = threading.Event(), threading.Event()
    real_delete = g1_store.delete

    def slow_delete(k, **kw):
        if k == key:
            in_sweep.set()
            go.wait(30)
        return real_delete(k, **kw)

    g1_store.delete = slow_delete
    result: dict = {}
    t = threading.Thread(target=lambda: result.update(peers("G1", g1_store).gc(1)))
    t.start()
    try:
        assert in_sweep.wait(30)
        real = time.time
        clock.set_clock(lambda: real() + 14 * 60)
        with pytest.raises(SwampError) as err:
            g2.gc(1)
        assert err.value.code == "gc_contended"
        clock.set_clock(None)
        assert "sweep" in _marks(g2)
    finally:
        go.set()
        t.join()
    assert result["blobsDeleted"] == 1 and "sweep" not in _marks(g2)


def test_on_s3_the_blob_grace_is_not_shortened_by_a_runners_clock(peers):
    """Marked by a runner a day behind, swept by one a day ahead: the blob
    was marked seconds ago on the server's clock, so it stays."""
    real = time.time
    clock.set_clock(lambda: real() - 25 * 3600)
    g, key = _seeded(peers)
    clock.set_clock(lambda: real() + 25 * 3600)
    assert g.gc(1)["blobsDeleted"] == 0
    clock.set_clock(None)
    assert g.store.head(key) is not None


def _faketime() -> str:
    exe = shutil.which("faketime")
    if not exe:
        pytest.skip("faketime is not installed (Debian package 'faketime')")
    return exe


def _skewed_gc(repo: Path, offset: str) -> subprocess.CompletedProcess:
    argv = [_faketime(), "-f", offset, PYTHON, "-m", "swamp", *_argv(repo, ["datastore", "gc"], True)]
    return subprocess.run(argv, capture_output=True, text=True, env=_env(), cwd=repo, timeout=120)


def test_a_swamp_gc_12_minutes_ahead_refuses_a_live_sweep_and_takes_a_dead_one(seaweedfs, tmp_path):
    """`swamp datastore gc` under libfaketime, 12 minutes ahead of the
    server (S3 still signs its requests): a sweep another gc published
    just now is live (gc_contended, the record stays); one that is older
    than its window and the stale allowance on the server's clock is
    taken for a dead gc's, and the gc completes."""
    repo = init_repo(tmp_path / "repo")
    prefix = seaweedfs.new_prefix()
    ok(repo, "datastore", "setup", *s3_setup_args(seaweedfs, prefix))
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(repo, "datastore", "gc")
    store, layout = seaweedfs.store(prefix), Layout("default")
    doc = json.loads(store.get(layout.gc_mark_key)[0])
    doc["sweep"] = {"id": "live", "serverStartedAt": server_now(store, layout), "startedAt": time.time(),
                    "windowS": SWEEP_WINDOW_S,
                    "blobs": []}
    store.put(layout.gc_mark_key, json.dumps(doc).encode())
    p = _skewed_gc(repo, "+12m")
    assert p.returncode != 0 and json.loads(p.stdout or p.stderr)["code"] == "gc_contended", p
    assert json.loads(store.get(layout.gc_mark_key)[0])["sweep"]["id"] == "live"
    doc["sweep"]["serverStartedAt"] -= SWEEP_WINDOW_S + STALE_SWEEP_S + 5
    store.put(layout.gc_mark_key, json.dumps(doc).encode())
    p = _skewed_gc(repo, "+12m")
    assert p.returncode == 0, p
    assert "sweep" not in json.loads(store.get(layout.gc_mark_key)[0])
