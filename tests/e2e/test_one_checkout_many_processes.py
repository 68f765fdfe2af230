"""Eight processes on one checkout at once (issue 9 item 2, the "8
concurrent config set lose keys" report): `config set`, `config unset`,
method runs and syncs. Every change a command acknowledged survives, here
and on a second peer, on a directory datastore and on SeaweedFS."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import cli, init_repo, ok, peer_from_git, s3_setup_args

pytestmark = pytest.mark.slow


def _storm(repo, rounds: int = 3) -> tuple[set[str], int]:
    """8 workers: 5 setting keys of their own (one also unsets one of its
    keys), 2 running a method, 1 syncing. Returns the keys that must stay
    and how many method runs succeeded."""
    def setter(w: int) -> list[str]:
        kept = []
        for i in range(rounds):
            key = f"k{w}-{i}"
            r = cli(repo, "config", "set", key, json.dumps(i), timeout=180)
            assert r.code == 0, r
            kept.append(key)
        if w == 0:
            r = cli(repo, "config", "unset", kept[0], timeout=180)
            assert r.code == 0, r
            kept = kept[1:]
        return kept

    def runner(_w: int) -> int:
        return sum(cli(repo, "model", "method", "run", "hello", "execute", timeout=180).code == 0
                   for _ in range(rounds))

    def syncer(_w: int) -> int:
        for _ in range(rounds * 2):
            cli(repo, "datastore", "sync", timeout=180)  # may meet a busy lease: not the point here
        return 0

    with ThreadPoolExecutor(8) as pool:
        setters = [pool.submit(setter, w) for w in range(5)]
        runners = [pool.submit(runner, w) for w in range(2)]
        sync = pool.submit(syncer, 0)
        kept = {k for f in setters for k in f.result()}
        runs = sum(f.result() for f in runners)
        sync.result()
    return kept, runs


def test_eight_processes_on_a_directory_datastore_lose_no_setting(tmp_path):
    repo = init_repo(tmp_path / "r")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=true")
    kept, runs = _storm(repo)
    settings = ok(repo, "config", "list")
    assert set(settings) == kept
    assert [v["version"] for v in ok(repo, "data", "versions", "hello", "result")] == list(range(1, runs + 1))


@pytest.mark.s3
def test_eight_processes_on_a_shared_datastore_lose_no_setting_here_or_on_a_peer(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=true")
    ok(a, "datastore", "setup", *setup)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *setup)
    ok(b, "config", "set", "from-b", "1")  # a peer's key, which a's stale reads must not drop
    kept, runs = _storm(a, rounds=2)
    ok(a, "datastore", "sync")
    ok(b, "datastore", "sync")
    for repo in (a, b):
        assert set(ok(repo, "config", "list")) == kept | {"from-b"}, repo
        versions = [v["version"] for v in ok(repo, "data", "versions", "hello", "result")]
        assert versions == list(range(1, runs + 1)), repo
