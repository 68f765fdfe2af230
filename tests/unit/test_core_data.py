"""data get/list/versions/delete/gc on the local datastore."""

from __future__ import annotations

import pytest

from swamp.util import clock
from tests.helpers import PROBE_TYPE, init_repo, invoke, snapshot, write_type

T0 = 1_900_000_000.0  # a fixed instant, so ages are exact


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    assert invoke(r, "model", "create", "acme/probe", "p").code == 0
    return r


def run(repo, *args):
    r = invoke(repo, "model", "method", "run", *args)
    assert r.code == 0, r
    return r.data


def versions(repo, model, name):
    r = invoke(repo, "data", "versions", model, name)
    assert r.code == 0, r
    return [v["version"] for v in r.data]


def test_get_defaults_to_the_highest_version(repo):
    for i in range(3):
        run(repo, "p", "write", "--input", f"note=n{i}")
    d = invoke(repo, "data", "get", "p", "out").data
    assert d["version"] == 3 and d["content"]["note"] == "n2"
    for key in ["name", "version", "specName", "kind", "createdAt", "size", "sha256", "tags", "content"]:
        assert key in d, key
    assert d["name"] == "out" and d["specName"] == "out" and d["kind"] == "resource"
    assert invoke(repo, "data", "get", "p", "out", "--version", "2").data["content"]["note"] == "n1"
    meta = invoke(repo, "data", "get", "p", "out", "--no-content").data
    assert "content" not in meta and meta["version"] == 3 and meta["sha256"] == d["sha256"]


def test_get_of_missing_data(repo):
    run(repo, "p", "write")
    for args, needle in [(["out", "--version", "9"], "no version 9"), (["nothing"], "nothing"),
                         (["latest"], "reserved")]:
        r = invoke(repo, "data", "get", "p", *args)
        assert r.code == 1, r
        assert needle in r.error["error"]
    r = invoke(repo, "data", "get", "ghost", "out")
    assert r.code == 1 and r.error["code"] == "not_found"


def test_get_prefers_a_higher_version_directory_over_anything_cached(repo):
    """The latest version is the highest complete version directory."""
    import shutil

    run(repo, "p", "write", "--input", "note=one")
    run(repo, "p", "write", "--input", "note=two")
    assert invoke(repo, "data", "get", "p", "out").data["version"] == 2
    v2 = next((repo / ".swamp" / "data").rglob("out/2"))
    # A complete version 7 that arrives in the tree (another peer, a restore)
    # is the latest at once.
    from swamp.util import yamlio

    shutil.copytree(v2, v2.parent / "7")
    meta = yamlio.load(v2.parent / "7" / "metadata.yaml")
    (v2.parent / "7" / "metadata.yaml").write_text(yamlio.dumps({**meta, "version": 7}))
    assert invoke(repo, "data", "get", "p", "out").data["version"] == 7
    # An incomplete claimed directory (no metadata) is not a version.
    (v2.parent / "7" / "metadata.yaml").unlink()
    assert invoke(repo, "data", "get", "p", "out").data["version"] == 2
    assert versions(repo, "p", "out") == [1, 2]
    # And the next write moves past every claimed number.
    run(repo, "p", "write")
    assert versions(repo, "p", "out") == [1, 2, 8]


def test_list_and_versions(repo):
    run(repo, "p", "write", "--input", "times=3")
    invoke(repo, "model", "create", "acme/probe", "another")
    run(repo, "another", "stamp")
    rows = invoke(repo, "data", "list").data
    assert [(r["model"], r["name"]) for r in rows] == [
        ("another", "aged"), ("another", "all"), ("another", "temp"), ("p", "out"), ("p", "report")]
    out = next(r for r in rows if r["name"] == "out")
    assert out["latestVersion"] == 3 and out["versions"] == 3 and out["kind"] == "resource"
    assert [r["name"] for r in invoke(repo, "data", "list", "p").data] == ["out", "report"]
    vs = invoke(repo, "data", "versions", "p", "out").data
    assert [v["version"] for v in vs] == [1, 2, 3]
    assert all({"version", "createdAt", "size"} <= set(v) for v in vs)
    assert [v["createdAt"] for v in vs] == sorted(v["createdAt"] for v in vs)
    r = invoke(repo, "data", "versions", "p", "nothing")
    assert r.code == 1 and r.error["code"] == "not_found"


def test_delete_needs_yes_and_deletes_what_it_says(repo):
    run(repo, "p", "write", "--input", "times=3")
    before = snapshot(repo)
    r = invoke(repo, "data", "delete", "p", "out", "--version", "2")
    assert r.code == 2, r
    assert "-y" in r.error["error"]
    assert snapshot(repo) == before

    r = invoke(repo, "data", "delete", "p", "out", "--version", "2", "-y")
    assert r.code == 0, r
    assert r.data["deletedVersions"] == [2]
    assert versions(repo, "p", "out") == [1, 3]
    assert invoke(repo, "data", "get", "p", "out", "--version", "2").code == 1
    r = invoke(repo, "data", "delete", "p", "out", "--version", "2", "-y")
    assert r.code == 1 and r.error["code"] == "not_found"

    r = invoke(repo, "data", "delete", "p", "out", "-y")
    assert r.code == 0 and r.data["deletedVersions"] == [1, 3]
    assert [x["name"] for x in invoke(repo, "data", "list", "p").data] == ["report"]
    assert invoke(repo, "data", "delete", "p", "out", "-y").code == 1


def test_model_delete_is_refused_while_data_exists(repo):
    run(repo, "p", "write")
    before = snapshot(repo)
    r = invoke(repo, "model", "delete", "p", "-y")
    assert r.code == 1, r
    assert r.error["code"] == "conflict" and "--force" in r.error["hint"]
    assert snapshot(repo) == before
    r = invoke(repo, "model", "delete", "p", "-y", "--force")
    assert r.code == 0, r
    assert r.data["deletedData"] == ["out", "report"]
    assert invoke(repo, "data", "list").data == []
    assert not (repo / "models" / "acme" / "probe" / "p.yaml").exists()


def test_gc_keeps_the_newest_n(repo):
    run(repo, "p", "write", "--input", "times=5")  # out: keep 3
    run(repo, "p", "write")  # report has no policy: both versions stay
    before = snapshot(repo)
    r = invoke(repo, "data", "gc", "--dry-run")
    assert r.code == 0, r
    assert r.data == {"deleted": [{"model": "p", "name": "out", "version": v} for v in (1, 2, 3)],
                      "dryRun": True}
    assert snapshot(repo) == before, "--dry-run deletes nothing"

    assert invoke(repo, "data", "gc").code == 2  # -y is required without a terminal
    assert snapshot(repo) == before
    r = invoke(repo, "data", "gc", "-y")
    assert r.code == 0 and r.data["dryRun"] is False
    assert [d["version"] for d in r.data["deleted"]] == [1, 2, 3]
    assert versions(repo, "p", "out") == [4, 5, 6]
    assert versions(repo, "p", "report") == [1, 2]
    assert invoke(repo, "data", "gc", "-y").data["deleted"] == []


def test_gc_by_age_never_drops_the_newest(repo, monkeypatch):
    now = {"t": T0}
    monkeypatch.setattr(clock, "_now", lambda: now["t"])
    for i in range(3):
        now["t"] = T0 + i * 60
        run(repo, "p", "stamp")
    now["t"] = T0 + 30 * 60  # aged v1..v3 are 30, 29, 28 minutes old: under 1h, all stay
    assert invoke(repo, "data", "gc", "-y").data["deleted"] == []

    now["t"] = T0 + 3 * 3600  # every version is older than 1h (and than temp's 1h lifetime)
    r = invoke(repo, "data", "gc", "--dry-run")
    deleted = {(d["name"], d["version"]) for d in r.data["deleted"]}
    # aged (policy 1h): all but the newest. temp (lifetime 1h): expired, every version.
    # all (no policy, infinite lifetime): nothing.
    assert deleted == {("aged", 1), ("aged", 2), ("temp", 1), ("temp", 2), ("temp", 3)}
    invoke(repo, "data", "gc", "-y")
    assert versions(repo, "p", "aged") == [3]
    assert versions(repo, "p", "all") == [1, 2, 3]
    assert "temp" not in [x["name"] for x in invoke(repo, "data", "list", "p").data]
