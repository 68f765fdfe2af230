"""The sync engine against a real S3 server (SeaweedFS), with two peers, and
through the fault proxy: the same promises as the unit tests, over HTTP."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Iterator

import pytest

from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.objectstore.s3 import S3ObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.localonly import is_synced
from swamp.util.atomic import atomic_write
from swamp.repo.datastores import path_rules
from tests.fixtures.faultproxy import Fault, FaultProxy

pytestmark = pytest.mark.s3


def write(e: SyncEngine, rel: str, data: bytes) -> None:
    e.mark_dirty(rel)
    atomic_write(e.root / rel, data)


def files(e: SyncEngine) -> dict[str, bytes]:
    return {r: (e.root / r).read_bytes() for r in e.tree.walk() if is_synced(r)}


@pytest.fixture
def peers(seaweedfs, tmp_path: Path) -> Iterator:  # type: ignore[no-untyped-def]
    prefix = seaweedfs.new_prefix()
    made = []

    def make(name: str, store=None) -> SyncEngine:  # type: ignore[no-untyped-def]
        e = SyncEngine(store or RetryingObjectStore(seaweedfs.store(prefix)), tmp_path / name, rules=path_rules(), peer=name)
        made.append(e)
        return e

    make.prefix = prefix  # type: ignore[attr-defined]
    yield make
    for e in made:
        e.close()


def test_two_peers_transfer_nothing_twice(peers) -> None:  # type: ignore[no-untyped-def]
    a, b = peers("a"), peers("b")
    a.init_remote()
    for i in range(40):
        write(a, f"outputs/acme-c/run/{i}.yaml", f"run: {i}\n".encode() * 50)
    assert a.push("seed").filesPushed == 40
    assert b.pull().filesPulled == 40
    assert files(a) == files(b)
    assert b.push(full_walk=True).requests == 0
    assert b.sync().requests == 1


def test_merge_delete_and_immutable_renumbering(peers) -> None:  # type: ignore[no-untyped-def]
    a, b = peers("a"), peers("b")
    write(a, "extensions/lockfile.json", b'{"base": 1}')
    write(a, "files/gone", b"x")
    a.push()
    b.pull()
    write(a, "extensions/lockfile.json", b'{"base": 1, "a": 1}')
    write(b, "extensions/lockfile.json", b'{"base": 1, "b": 1}')
    b.mark_dirty("files/gone")
    (b.root / "files/gone").unlink()
    write(a, "data/acme-c/m1/count/1/raw", b"a's version 1")
    write(b, "data/acme-c/m1/count/1/raw", b"b's version 1")
    a.push()
    assert b.push().conflicts == []  # b's version 1, never published, is renumbered
    a.pull()
    assert files(a) == files(b)
    assert json.loads(files(a)["extensions/lockfile.json"]) == {"base": 1, "a": 1, "b": 1}
    assert files(a)["data/acme-c/m1/count/1/raw"] == b"a's version 1"
    assert files(a)["data/acme-c/m1/count/2/raw"] == b"b's version 1"
    assert "files/gone" not in files(a)
    assert a.verify()["ok"]


def test_versions_under_the_lease_over_s3(peers) -> None:  # type: ignore[no-untyped-def]
    engines = [peers("a"), peers("b")]
    name_dir = "data/acme-c/m1/count"
    errors: list[BaseException] = []

    def work(e: SyncEngine) -> None:
        try:
            for _ in range(3):
                with e.lease("model/acme-c/m1", ttl_ms=5000, timeout_ms=60000):
                    e.pull()
                    d = e.root / name_dir
                    v = 1 + max((int(p.name) for p in d.iterdir() if p.name.isdigit()), default=0) \
                        if d.exists() else 1
                    write(e, f"{name_dir}/{v}/raw", f"{e.peer}".encode())
                    e.push("model method run")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for e in engines:
        e.pull()
    raws = sorted(r for r in files(engines[0]) if r.endswith("/raw"))
    assert raws == [f"{name_dir}/{v}/raw" for v in range(1, 7)]
    assert files(engines[0]) == files(engines[1])


def test_sync_through_faults_completes_or_fails_cleanly_then_converges(peers, seaweedfs) -> None:  # type: ignore[no-untyped-def]
    with FaultProxy(seaweedfs.endpoint_url, seed=11) as proxy:
        def faulty() -> RetryingObjectStore:
            inner = S3ObjectStore(seaweedfs.bucket, peers.prefix, endpoint_url=proxy.url, timeout_s=1.0,
                                  connect_timeout_s=1.0)
            return RetryingObjectStore(inner, attempts=2, base_delay=0.01, max_delay=0.05)

        a, b = peers("a", faulty()), peers("b", faulty())
        proxy.fail_fraction(0.2, Fault("status", status=503), Fault("drop"),
                            Fault("drop", after_upstream=True), Fault("status", status=500, after_upstream=True))
        written = {}
        failures = 0
        for i in range(12):
            e = (a, b)[i % 2]
            rel = f"files/{e.peer}/{i % 3}"
            written[rel] = f"{e.peer} {i}".encode()
            write(e, rel, written[rel])
            try:
                e.sync(f"step {i}")
            except Exception as exc:  # must be a clean, typed failure
                assert exc.__class__.__module__.startswith("swamp."), repr(exc)
                failures += 1
        assert proxy.faults > 0
        proxy.clear()
        for e in (a, b, a, b):
            e.sync()
        assert files(a) == files(b) == written
        assert a.verify()["ok"]
