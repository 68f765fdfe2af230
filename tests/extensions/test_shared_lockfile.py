"""The founding bug, end to end: three peers share a datastore on
SeaweedFS; the extension lockfile lives in it and is changed one entry at a
time, so no peer's pin is ever dropped or brought back, a failed publish
says so and the next run publishes, and no lock file is ever uploaded. The
extensions are built and published to a real pypiserver through
`swamp extension publish`."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fixtures.faultproxy import Fault, FaultProxy
from tests.helpers import cli, init_repo
from tests.helpers import ok

pytestmark = [pytest.mark.slow, pytest.mark.s3]

SEEDS = ("seed-one", "seed-two", "seed-three")
#: the two commands take turns on the lockfile's lease: on a loaded 2-core
#: machine the second may wait longer than the suite's default 20 s
PATIENT = {"SWAMP_LOCK_TIMEOUT_MS": "90000"}


@pytest.fixture(scope="session")
def seeds(pypi, tmp_path_factory):
    """seed-one, seed-two and seed-three, scaffolded and published once."""
    base = tmp_path_factory.mktemp("seeds")

    def make(name):
        ext = base / name
        assert cli(None, "extension", "new", name, "--path", ext, cwd=base).code == 0
        r = cli(None, "extension", "publish", ext, "--index", pypi.url, cwd=base, timeout=120)
        assert r.code == 0, r

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(make, SEEDS))
    return pypi.url


@pytest.fixture
def team(tmp_path, seaweedfs, seeds):
    with FaultProxy(seaweedfs.endpoint_url) as proxy:
        args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
                "--endpoint-url", proxy.url, "--region", "us-east-1"]
        peers = []
        for name in "abc":
            repo = init_repo(tmp_path / name)
            ok(repo, "datastore", "setup", *args)
            peers.append(repo)
        yield proxy, peers, seeds


def _pins(repo: Path) -> list[str]:
    doc = json.loads((repo / ".swamp" / "extensions" / "lockfile.json").read_text())
    return sorted(doc["extensions"])


def _b_removes_while_a_pulls_three(a, b, index):
    with ThreadPoolExecutor(2) as pool:
        rm = pool.submit(cli, b, "extension", "rm", "seed-two", env=PATIENT)
        pull = pool.submit(cli, a, "extension", "pull", "seed-three", "--index", index, env=PATIENT)
        assert rm.result().code == 0, rm.result()
        assert pull.result().code == 0, pull.result()


def _every_peer_has_one_and_three_and_runs_both(peers):
    a = peers[0]
    for t in ("seed-one", "seed-three"):
        ok(a, "model", "create", f"{t}/hello", t)
    for repo in peers:
        ok(repo, "datastore", "sync")
        assert _pins(repo) == ["seed-one", "seed-three"], repo
        assert not (repo / "extensions" / "lockfile.json").exists()  # in the datastore, not beside git's files
        if repo != a:
            import shutil

            shutil.copytree(a / "models", repo / "models", dirs_exist_ok=True)
        for t in ("seed-one", "seed-three"):  # peer c never pulled: first use installs them
            ok(repo, "model", "method", "run", t, "greet")
    paths = {c["path"] for commit in ok(a, "datastore", "log", "--limit", "200") for c in commit["changes"]}
    extension_paths = {p for p in paths if "extension" in p or "lock" in p}
    history = {p for p in extension_paths if p.startswith("extensions/history/") and p.endswith(".json")}
    assert history  # each change of the pins is recorded too (one object each)
    assert extension_paths - history == {"extensions/lockfile.json"}, extension_paths


def test_seed_scenario_no_pin_is_dropped_or_brought_back(team):
    proxy, (a, b, c), index = team
    ok(a, "extension", "pull", "seed-one", "--index", index)
    ok(b, "extension", "pull", "seed-two", "--index", index)  # b had not synced since a's pull
    assert _pins(b) == ["seed-one", "seed-two"]
    _b_removes_while_a_pulls_three(a, b, index)
    _every_peer_has_one_and_three_and_runs_both([a, b, c])


def test_seed_scenario_with_a_failed_publish_that_heals(team):
    proxy, (a, b, c), index = team
    ok(a, "extension", "pull", "seed-one", "--index", index)
    proxy.fail_matching("PUT", "/log/", Fault("status", status=403))
    failed = cli(b, "extension", "pull", "seed-two", "--index", index)
    assert failed.code == 1 and failed.error["code"] == "unpublished", failed
    assert failed.data["published"] is False and failed.data["name"] == "seed-two"
    assert _pins(b) == ["seed-one", "seed-two"]  # done here, kept
    ok(c, "datastore", "sync")
    assert _pins(c) == ["seed-one"]  # not published

    proxy.clear()
    again = ok(b, "extension", "pull", "seed-two", "--index", index)  # never "done" while unpublished
    assert again["changed"] is False
    ok(c, "datastore", "sync")
    assert _pins(c) == ["seed-one", "seed-two"]
    _b_removes_while_a_pulls_three(a, b, index)
    _every_peer_has_one_and_three_and_runs_both([a, b, c])


def test_an_unpublished_change_merges_per_entry_and_the_same_entry_is_a_named_conflict(team, pypi):
    from tests.extensions.wheels import make_wheel

    proxy, (a, b, _), _ = team
    for name, v in (("mrg-y", "1.0"), ("mrg-z", "1.0"), ("mrg-x", "1.0"), ("mrg-x", "2.0")):
        make_wheel(pypi.packages, name, v, types=(f"mrg/{name[-1]}",))

    def unpublished_pull(repo, spec):
        proxy.fail_matching("PUT", "/log/", Fault("status", status=403))
        r = cli(repo, "extension", "pull", spec, "--index", pypi.url)
        proxy.clear()
        assert r.code == 1 and r.error["code"] == "unpublished", r

    unpublished_pull(a, "mrg-y")  # a's change stays local...
    ok(b, "extension", "pull", "mrg-z", "--index", pypi.url)  # ...while b's is published
    ok(a, "datastore", "sync")  # a merges b's entry beside its own and publishes both
    ok(b, "datastore", "sync")
    assert _pins(a) == _pins(b) == ["mrg-y", "mrg-z"]

    unpublished_pull(a, "mrg-x==1.0")
    ok(b, "extension", "pull", "mrg-x==2.0", "--index", pypi.url)
    clash = cli(a, "datastore", "sync")
    assert clash.code == 1, clash
    [conflict] = clash.data["conflicts"]
    assert conflict["path"] == "extensions/lockfile.json"
    assert any(k.startswith("extensions.mrg-x") for k in conflict["keys"]), conflict
