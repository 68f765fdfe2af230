"""`swamp datastore namespace list|set|unset|migrate`, `datastore compact`
and `datastore type search` (issue 15): repositories in different
namespaces of one bucket never see each other's data; migrate takes a
checkout's state to an empty namespace; a datastore that is down is a
clear error with nothing changed."""

from __future__ import annotations

from tests.fixtures.faultproxy import FaultProxy
from tests.helpers import cli, init_repo, ok, peer_from_git, run_hello, snapshot


def _setup(seaweedfs, prefix: str, namespace: str, endpoint: str | None = None) -> list[str]:
    return ["s3", "--bucket", seaweedfs.bucket, "--prefix", prefix, "--endpoint-url",
            endpoint or seaweedfs.endpoint_url, "--region", "us-east-1", "--namespace", namespace]


def _hello_repo(path):
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    return repo


def _outputs(repo) -> list[str]:
    return sorted(r["id"] for r in ok(repo, "run", "history", "--kind", "method"))


def test_two_namespaces_on_one_bucket_do_not_see_each_other_and_migrate_moves_state(tmp_path, seaweedfs):
    prefix = seaweedfs.new_prefix()
    a = _hello_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *_setup(seaweedfs, prefix, "team-a"))
    run_hello(a, "from-a")
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *_setup(seaweedfs, prefix, "team-b"))
    run_hello(b, "from-b")

    a_runs, b_runs = _outputs(a), _outputs(b)
    assert len(a_runs) == 1 and len(b_runs) == 1 and a_runs != b_runs
    ok(a, "datastore", "sync")
    assert _outputs(a) == a_runs  # b's run is not in a's namespace

    listed = ok(a, "datastore", "namespace", "list")
    assert [r["namespace"] for r in listed] == ["team-a", "team-b"]
    assert [r["current"] for r in listed] == [True, False]
    assert all(r["objects"] > 0 for r in listed)

    # a moves to an empty namespace, taking its state along; team-a stays as it was
    moved = ok(a, "datastore", "namespace", "migrate", "team-c", "-y")
    assert moved["namespace"] == "team-c" and moved["previous"] == "team-a" and moved["migrated"]
    assert moved["filesPushed"] > 0
    assert "namespace: team-c" in (a / ".swamp.yaml").read_text()
    assert _outputs(a) == a_runs
    c = peer_from_git(a, tmp_path / "c")
    ok(c, "datastore", "setup", *_setup(seaweedfs, prefix, "team-c"))
    assert _outputs(c) == a_runs  # the new namespace holds a's state
    assert [r["namespace"] for r in ok(c, "datastore", "namespace", "list")] == ["team-a", "team-b", "team-c"]

    # migrating onto a namespace that holds another repository's state is refused
    r = cli(a, "datastore", "namespace", "migrate", "team-b", "-y")
    assert r.code == 1 and r.error["code"] == "conflict" and "namespace set team-b" in r.error["hint"]
    assert _outputs(a) == a_runs

    # b joins team-c: its runtime state becomes team-c's (b's own stays in team-b)
    joined = ok(b, "datastore", "namespace", "set", "team-c", "-y")
    assert joined["namespace"] == "team-c" and not joined["migrated"] and not joined["created"]
    assert _outputs(b) == a_runs
    run_hello(b, "b-in-c")
    assert len(_outputs(a)) == 2  # a sees b's new run: they share team-c now

    # and back: unset is namespace 'default' (new and empty here)
    back = ok(b, "datastore", "namespace", "unset", "-y")
    assert back["namespace"] == "default" and back["created"]
    assert _outputs(b) == []
    assert ok(b, "datastore", "status")["namespace"] == "default"


def test_set_refuses_unpublished_changes_and_bad_names(tmp_path, seaweedfs):
    prefix = seaweedfs.new_prefix()
    a = _hello_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *_setup(seaweedfs, prefix, "one"))
    run_hello(a, "x")
    # unpublished work: made offline
    ok(a, "config", "set", "team", "blue", "--offline")
    assert ok(a, "datastore", "status")["dirtyFiles"] == 1
    before = snapshot(a)
    r = cli(a, "datastore", "namespace", "set", "two", "-y")
    assert r.code == 1 and r.error["code"] == "conflict"
    assert "not published" in r.error["error"] and "namespace migrate two" in r.error["hint"]
    assert snapshot(a) == before
    r = cli(a, "datastore", "namespace", "set", "Bad Name!", "-y")
    assert r.code == 1 and r.error["code"] == "validation" and "namespace" in r.error["error"]
    assert snapshot(a) == before
    r = cli(a, "datastore", "namespace", "set", "two")  # no terminal, no -y
    assert r.code == 2 and "-y" in r.error["error"]
    assert ok(a, "datastore", "namespace", "set", "one", "-y")["changed"] is False


def test_a_datastore_that_is_down_changes_nothing(tmp_path, seaweedfs):
    prefix = seaweedfs.new_prefix()
    with FaultProxy(seaweedfs.endpoint_url) as proxy:
        a = _hello_repo(tmp_path / "a")
        ok(a, "datastore", "setup", *_setup(seaweedfs, prefix, "one", endpoint=proxy.url))
        run_hello(a, "x")
    # the proxy is closed: the endpoint is down
    before = snapshot(a)
    for args in (["set", "two"], ["migrate", "two"], ["unset"], ["list"]):
        r = cli(a, "datastore", "namespace", *args, "-y" if args != ["list"] else "--quiet")
        assert r.code == 1, r
        assert "Traceback" not in r.stderr and r.error["error"]
        assert snapshot(a) == before, args
    assert "namespace: one" in (a / ".swamp.yaml").read_text()


def test_namespaces_need_a_shared_datastore(tmp_path):
    repo = init_repo(tmp_path / "r")
    for args in (["list"], ["set", "x", "-y"], ["migrate", "x", "-y"]):
        r = cli(repo, "datastore", "namespace", *args)
        assert r.code == 1 and r.error["code"] == "not_shared" and "datastore setup" in r.error["hint"]


def test_compact_measures_the_local_catalog_and_sync_state(tmp_path, seaweedfs):
    a = _hello_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *_setup(seaweedfs, seaweedfs.new_prefix(), "default"))
    for i in range(3):
        run_hello(a, f"v{i}")
    ok(a, "data", "search", "hello")  # builds the query catalog
    done = ok(a, "datastore", "compact")
    parts = {p["part"]: p for p in done["parts"]}
    assert {"catalog", "sync-state", "temp-files"} <= set(parts)
    for name in ("catalog", "sync-state"):
        assert 0 < parts[name]["bytesAfter"] <= parts[name]["bytesBefore"]
    assert done["bytesAfter"] <= done["bytesBefore"]
    assert len(_outputs(a)) == 3  # nothing lost
    ok(a, "datastore", "sync")
    human = cli(a, "datastore", "compact", json=False)
    assert human.code == 0 and "total:" in human.stdout


def test_type_search(tmp_path):
    rows = ok(None, "datastore", "type", "search")
    assert [r["type"] for r in rows] == ["filesystem", "gcs", "s3"]
    assert [r["type"] for r in ok(None, "datastore", "type", "search", "S3")] == ["s3"]
    assert ok(None, "datastore", "type", "search", "nothing-like-this") == []
    human = cli(None, "datastore", "type", "search", "nothing-like-this", json=False)
    assert human.code == 0 and "no datastore type matches" in human.stdout
