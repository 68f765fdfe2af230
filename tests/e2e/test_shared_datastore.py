"""End to end through the `swamp` command: several repositories sharing one
bucket on a real server (SeaweedFS for S3, fake-gcs-server for GCS), as a
team's laptops and CI jobs would."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo
from tests.helpers import ok, peer_from_git, repo_with_hello_runs, run_hello, s3_setup_args

pytestmark = pytest.mark.slow


@pytest.fixture(params=["s3", "gcs"])
def backend(request):
    """The `datastore setup` arguments for a fresh prefix on the backend."""
    if request.param == "s3":
        return s3_setup_args(request.getfixturevalue("seaweedfs"))
    server = request.getfixturevalue("fake_gcs")
    return ["gcs", "--bucket", server.bucket, "--prefix", server.new_prefix(),
            "--endpoint-url", server.endpoint_url]


@pytest.fixture
def team(tmp_path: Path, backend):
    a = repo_with_hello_runs(tmp_path / "a", 3)
    setup_a = ok(a, "datastore", "setup", *backend)
    assert setup_a["filesPushed"] > 0 and setup_a["conflicts"] == []
    b = peer_from_git(a, tmp_path / "b")
    setup_b = ok(b, "datastore", "setup", *backend)
    return a, b, setup_a, setup_b


def test_second_peer_pulls_and_then_has_nothing_to_push(team):
    a, b, setup_a, setup_b = team
    assert setup_b["filesPulled"] == setup_a["filesPushed"]
    assert setup_b["filesPushed"] == 0 and setup_b["bytesPushed"] == 0
    got = ok(b, "data", "get", "hello", "result")
    assert got["version"] == 3 and got["content"]["stdout"] == "a2"

    push = ok(b, "datastore", "sync", "--push")
    assert (push["filesPushed"], push["bytesPushed"]) == (0, 0)
    again = ok(b, "datastore", "sync")
    assert (again["filesPulled"], again["filesPushed"], again["filesDeleted"]) == (0, 0, 0)
    assert again["requests"] == 1


def test_versions_are_contiguous_and_latest_never_goes_back(team):
    a, b, *_ = team
    assert run_hello(a, "four")["dataArtifacts"][0]["version"] == 4
    assert run_hello(b, "five")["dataArtifacts"][0]["version"] == 5

    def burst(repo, who):
        return [run_hello(repo, f"{who}{i}")["dataArtifacts"][0]["version"] for i in range(4)]

    with ThreadPoolExecutor(2) as pool:
        va, vb = pool.map(burst, [a, b], ["a", "b"])
    assert not set(va) & set(vb), "two peers published the same version"
    for repo in (a, b):
        ok(repo, "datastore", "sync")
    for repo in (a, b):
        versions = ok(repo, "data", "versions", "hello", "result")
        assert [v["version"] for v in versions] == list(range(1, 14))
        assert len({v["sha256"] for v in versions}) == 13  # each version its own content
        assert ok(repo, "data", "get", "hello", "result")["version"] == 13


def test_delete_and_gc_propagate_and_stay_deleted(team):
    a, b, *_ = team
    ok(a, "data", "delete", "hello", "log", "-y")
    listing = ok(b, "data", "list")  # a read pulls first
    assert [r["name"] for r in listing] == ["result"]
    for _ in range(12):
        run_hello(a, "more")
    gc = ok(a, "data", "gc", "-y")
    assert gc["deleted"], "command/shell keeps 10 versions; older ones go"
    kept = [v["version"] for v in ok(b, "data", "versions", "hello", "result")]
    assert kept == list(range(6, 16))
    # B's own work and pushes never bring back what A removed.
    run_hello(b, "b")
    ok(b, "datastore", "sync")
    ok(a, "datastore", "sync")
    for repo in (a, b):
        assert [v["version"] for v in ok(repo, "data", "versions", "hello", "result")] == list(range(6, 17))
        # The deleted log's numbers 1-3 were never reused by later runs.
        assert [v["version"] for v in ok(repo, "data", "versions", "hello", "log")] == list(range(6, 17))


KILL_DRIVER = """
import os, sys
from swamp.datastore.objectstore import factory

limit = int(os.environ["KILL_AFTER_CALLS"])
real_open = factory.open_store
calls = 0

class Killing:
    def __init__(self, inner):
        self._inner = inner
        self.name = inner.name
    def __getattr__(self, attr):
        target = getattr(self._inner, attr)
        if attr not in ("get", "put", "head", "list", "delete"):
            return target
        def call(*a, **k):
            global calls
            calls += 1
            if calls >= limit:
                os._exit(9)  # as kill -9: no cleanup, no flush
            return target(*a, **k)
        return call

factory.open_store = lambda spec: Killing(real_open(spec))
from swamp.cli.main import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("kill_after", [2, 4, 6, 8, 10, 12])  # the setup makes about 13 calls
def test_setup_killed_half_way_then_rerun_ends_as_if_never_interrupted(tmp_path, backend, kill_after):
    import subprocess
    import sys

    from tests.helpers import _env

    a = repo_with_hello_runs(tmp_path / "a", 3)
    killed = subprocess.run([sys.executable, "-c", KILL_DRIVER, "datastore", "setup", *backend,
                             "--repo-dir", str(a), "--json"],
                            env=_env({"KILL_AFTER_CALLS": str(kill_after)}), capture_output=True, text=True)
    assert killed.returncode == 9, killed
    assert "datastore" not in (a / ".swamp.yaml").read_text()  # config is written last
    ok(a, "datastore", "setup", *backend)
    # The rerun left nothing to push, and a fresh peer sees exactly A's state.
    assert ok(a, "datastore", "sync")["filesPushed"] == 0
    c = peer_from_git(a, tmp_path / "c")
    ok(c, "datastore", "setup", *backend)
    for repo in (a, c):
        assert [v["version"] for v in ok(repo, "data", "versions", "hello", "result")] == [1, 2, 3]
        assert ok(repo, "data", "get", "hello", "result")["content"]["stdout"] == "a2"
    assert sorted(r["name"] for r in ok(c, "data", "list")) == ["log", "result"]
    assert len(ok(c, "model", "output", "search")) == 3


def test_peers_on_different_gateways_of_a_cluster(tmp_path, seaweedfs_cluster):
    server = seaweedfs_cluster
    prefix = server.new_prefix()

    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    run_hello(a, "first")
    ok(a, "datastore", "setup", *s3_setup_args(server, prefix, gateway=0))
    b = peer_from_git(a, tmp_path / "b")
    assert ok(b, "datastore", "setup", *s3_setup_args(server, prefix, gateway=1))["filesPulled"] > 0

    def burst(repo, who):
        return [run_hello(repo, f"{who}{i}")["dataArtifacts"][0]["version"] for i in range(3)]

    with ThreadPoolExecutor(2) as pool:
        va, vb = pool.map(burst, [a, b], ["a", "b"])
    assert not set(va) & set(vb)
    for repo in (a, b, a):
        ok(repo, "datastore", "sync")
    for repo in (a, b):
        assert [v["version"] for v in ok(repo, "data", "versions", "hello", "result")] == list(range(1, 8))


def test_shared_settings_merge_per_key_and_report_a_same_key_conflict(team):
    a, b, *_ = team
    ok(a, "config", "set", "region", "eu-west-1")
    ok(b, "config", "set", "owner", "team-b")  # B's cache had not seen A's change
    for repo in (a, b):
        assert ok(repo, "config", "list") == {"owner": "team-b", "region": "eu-west-1"}

    # Same key, different values, from stale caches (offline: no pull first).
    ok(a, "config", "set", "tier", "gold", "--offline")
    ok(b, "config", "set", "tier", "silver", "--offline")
    assert ok(a, "datastore", "sync")["conflicts"] == []
    r = cli(b, "datastore", "sync")
    assert r.code == 1
    conflicts = r.data["conflicts"]
    assert [c["path"] for c in conflicts] == ["config/shared.json"] and "tier" in conflicts[0]["keys"]
    # Nothing is lost: A's value is published and in place on both; B's is
    # saved beside it, for B to reconcile.
    import json

    for repo in (a, b):
        assert ok(repo, "config", "get", "tier")["value"] == "gold"
    saved = json.loads((b / ".swamp" / conflicts[0]["savedAs"]).read_text())
    assert saved["tier"] == "silver"


def test_namespaces_share_a_bucket_without_seeing_each_other(tmp_path, seaweedfs):
    base = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo a")
    run_hello(a, "a")
    ok(a, "datastore", "setup", *base, "--namespace", "team-a")
    b = peer_from_git(a, tmp_path / "b")
    setup_b = ok(b, "datastore", "setup", *base, "--namespace", "team-b")
    assert setup_b["filesPulled"] == 0
    assert ok(b, "data", "list") == []
    assert ok(b, "datastore", "status")["namespace"] == "team-b"


def test_lazy_hydration_fetches_contents_on_first_read(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    content = "lazy-" + "x" * 9000  # larger than what a commit record carries inline
    run_hello(a, content)
    ok(a, "datastore", "setup", *args)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *args, "--hydration", "lazy")
    raws = list((b / ".swamp" / "data").rglob("raw"))
    assert raws == [], "a lazy pull leaves contents on the server"
    assert ok(b, "data", "get", "hello", "result")["content"]["stdout"] == content
    assert len(list((b / ".swamp" / "data").rglob("raw"))) == 1
    assert ok(b, "datastore", "sync", "--push")["filesPushed"] == 0


def test_credentials_are_never_written_to_the_repository(team):
    import os

    a, b, *_ = team
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    for repo in (a, b):
        for path in repo.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path


WORKFLOW = """\
name: fan
jobs:
  - name: greet
    steps:
      - name: say
        forEach:
          item: who
          in: "${{ ['x', 'y', 'z'] }}"
        task:
          type: model_method
          modelIdOrName: hello
          methodName: execute
          inputs:
            run: "echo ${{ self.who }}"
"""


def test_a_workflow_run_on_one_peer_is_seen_by_the_other(team):
    a, b, *_ = team
    (a / "workflows" / "workflow-fan.yaml").write_text(WORKFLOW)
    shutil.copytree(a / "workflows", b / "workflows", dirs_exist_ok=True)
    run = ok(a, "workflow", "run", "fan")
    assert run["status"] == "succeeded"
    history = ok(b, "workflow", "history", "fan")
    assert [h["id"] for h in history] == [run["id"]]
    assert [v["version"] for v in ok(b, "data", "versions", "hello", "result")] == [1, 2, 3, 4, 5, 6]
    stdouts = sorted(ok(b, "data", "get", "hello", "result", "--version", str(v))["content"]["stdout"]
                     for v in (4, 5, 6))
    assert stdouts == ["x", "y", "z"]
    assert ok(a, "datastore", "sync")["filesPushed"] == 0


def test_status_counts_local_changes_until_they_are_pushed(team):
    a, b, *_ = team
    status = ok(a, "datastore", "status")
    assert status["type"] in ("s3", "gcs") and (status["dirtyFiles"], status["dirtyPaths"]) == (0, [])
    ok(a, "config", "set", "k", "v", "--offline")
    status = ok(a, "datastore", "status")
    assert status["dirtyFiles"] == 1 and status["dirtyPaths"] == ["config/shared.json"]
    head = status["head"]
    pushed = ok(a, "datastore", "sync", "--push")
    assert pushed["filesPushed"] == 1 and pushed["head"] == head + 1
    assert ok(a, "datastore", "status")["dirtyFiles"] == 0


def test_history_and_verify_of_the_shared_log(team):
    a, b, *_ = team
    run_hello(b, "from-b")
    log = ok(a, "datastore", "log", "--limit", "2")
    assert [c["seq"] for c in log] == sorted((c["seq"] for c in log), reverse=True)
    assert log[0]["command"] == "model method run hello execute"
    assert any(ch["path"].endswith("/raw") for ch in log[0]["changes"])
    report = ok(a, "datastore", "verify")
    assert report["ok"] and report["errors"] == [] and report["commits"] == 2  # A's setup, B's run
    dry = ok(a, "datastore", "gc", "--dry-run")
    assert isinstance(dry, dict)


def test_offline_reads_the_cache_and_refuses_what_needs_leases(team):
    a, b, *_ = team
    run_hello(a, "new")  # version 4, which B has not pulled
    assert ok(b, "data", "get", "hello", "result", "--offline")["version"] == 3
    assert ok(b, "data", "get", "hello", "result")["version"] == 4  # a plain read pulls first
    r = cli(b, "model", "method", "run", "hello", "execute", "--offline")
    assert r.code == 1 and r.error["code"] == "offline"


def test_a_method_run_reports_what_it_synced(team):
    a, b, *_ = team
    first = run_hello(a, "x")["sync"]
    assert first["filesPulled"] == 0 and first["filesPushed"] > 0 and first["conflicts"] == []
    second = run_hello(b, "y")["sync"]
    assert second["filesPulled"] == first["filesPushed"]  # B pulled exactly what A's run published
