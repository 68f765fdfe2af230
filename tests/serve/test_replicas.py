"""Replicas: two `swamp serve` processes on one SeaweedFS bucket, each with
its own cache, and a CLI peer, all running a method that reads its previous
state and writes n+1 at once (the third founding bug: a long-lived server
read `latest` backwards). Every version v must read v-1, and `latest` seen
through either replica is never lower than a version already acknowledged
to any client. Then a bounded load test through one replica."""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import init_repo, write_type
from tests.helpers import ok, s3_setup_args
from tests.serve.server import Serve

COUNTER = '''
    from swamp import Context, ModelType

    counter = ModelType("test/counter", version="2026.01.01.1", description="reads n, writes n+1")
    counter.resource("state", lifetime="infinite")


    @counter.method(description="n+1")
    def bump(args, ctx: Context) -> None:
        prev = ctx.read_resource("state")
        n = prev["n"] if prev else 0
        ctx.write_resource("state", "state", {"n": n + 1, "prev": n})
'''


def counter_repo(path):
    repo = init_repo(path)
    write_type(repo, "counter.py", COUNTER)
    ok(repo, "model", "create", "test/counter", "counter")
    return repo


def peer(origin, path):
    repo = init_repo(path)
    shutil.copytree(origin / "models", repo / "models", dirs_exist_ok=True)
    shutil.copytree(origin / "extensions", repo / "extensions", dirs_exist_ok=True)
    return repo


def assert_chain(server: Serve, total: int) -> None:
    """Versions 1..total, each holding n = v and having read v-1."""
    versions = server.get("/api/v1/data/counter/state/versions").doc
    assert [v["version"] for v in versions] == list(range(1, total + 1))
    for v in range(1, total + 1):
        content = server.get(f"/api/v1/data/counter/state?version={v}").doc["content"]
        assert content == {"n": v, "prev": v - 1}, f"version {v} read {content['prev']} as its previous state"


@pytest.mark.slow
@pytest.mark.s3
def test_two_replicas_and_a_cli_peer_never_read_latest_backwards(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = counter_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *setup)
    b, c = peer(a, tmp_path / "b"), peer(a, tmp_path / "c")
    ok(b, "datastore", "setup", *setup)
    ok(c, "datastore", "setup", *setup)
    replicas = [Serve(a), Serve(b)]
    acked: list[int] = []
    lock = threading.Lock()
    problems: list[str] = []
    path = "/api/v1/models/counter/methods/bump/run"

    def acknowledge(v: int) -> None:
        with lock:
            acked.append(v)

    def through(i: int, runs: int) -> None:
        me, other = replicas[i], replicas[1 - i]
        for _ in range(runs):
            r = me.post(path, {})
            assert r.status == 200 and r.doc["status"] == "succeeded", r
            v = r.doc["dataArtifacts"][0]["version"]
            acknowledge(v)
            seen = other.get("/api/v1/data/counter/state?content=false").doc["version"]
            if seen < v:
                problems.append(f"replica {1 - i} served latest {seen} after {v} was acknowledged")

    def by_cli(runs: int) -> None:
        for _ in range(runs):
            v = ok(c, "model", "method", "run", "counter", "bump")["dataArtifacts"][0]["version"]
            acknowledge(v)
            for r in replicas:
                seen = r.get("/api/v1/data/counter/state?content=false").doc["version"]
                if seen < v:
                    problems.append(f"a replica served latest {seen} after the CLI's {v} was acknowledged")

    try:
        with ThreadPoolExecutor(3) as pool:
            futures = [pool.submit(through, 0, 8), pool.submit(through, 1, 8), pool.submit(by_cli, 4)]
            for f in futures:
                f.result()
        assert not problems, problems
        assert sorted(acked) == list(range(1, 21))
        assert replicas[1].get("/api/v1/datastore/status").doc["type"] == "s3"
        assert_chain(replicas[0], 20)
        assert_chain(replicas[1], 20)
    finally:
        for r in replicas:
            r.stop()


@pytest.mark.slow
def test_load_concurrent_method_runs_none_lost_versions_contiguous(tmp_path):
    repo = counter_repo(tmp_path / "repo")
    server = Serve(repo, "--max-runs-per-caller", "1000")  # the load is one caller's
    total = 200
    try:
        with ThreadPoolExecutor(total) as pool:
            replies = list(pool.map(lambda _: server.post("/api/v1/models/counter/methods/bump/run", {},
                                                          timeout=120), range(total)))
        assert [r.status for r in replies] == [200] * total
        versions = sorted(r.doc["dataArtifacts"][0]["version"] for r in replies)
        assert versions == list(range(1, total + 1))
        assert server.get("/health").doc["inflight"] == 0
        assert_chain(server, total)
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.s3
def test_concurrent_runs_through_one_replica_on_a_shared_datastore(tmp_path, seaweedfs):
    a = counter_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *s3_setup_args(seaweedfs))
    server = Serve(a, "--max-runs-per-caller", "1000")  # the load is one caller's
    total = 40
    try:
        with ThreadPoolExecutor(total) as pool:
            replies = list(pool.map(lambda _: server.post("/api/v1/models/counter/methods/bump/run", {},
                                                          timeout=120), range(total)))
        assert [r.status for r in replies] == [200] * total, [r.doc for r in replies if r.status != 200][:3]
        assert sorted(r.doc["dataArtifacts"][0]["version"] for r in replies) == list(range(1, total + 1))
        assert_chain(server, total)
    finally:
        server.stop()
