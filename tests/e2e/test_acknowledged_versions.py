"""A version number, once a command reported it, holds that run's data
(issue 24: N1 and the errors that must keep their meaning). Through the
`swamp` command, against SeaweedFS (a fault proxy where a push must fail).

The runs that must still be going while another peer acts wait for a file
the test creates (no sleeps to win a race): the method's shell loops until
``go`` exists."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fixtures.faultproxy import Fault
from tests.helpers import cli, ok, peer_from_git, popen, s3_setup_args
from tests.helpers import init_repo

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _held_run(repo: Path, go: Path, text: str):
    """A `model method run hello execute` that holds the model's lease
    until ``go`` exists, then prints ``text``."""
    return popen(repo, "model", "method", "run", "hello", "execute", "--input",
                 f"run=while [ ! -e {go} ]; do sleep 0.05; done; echo {text}")


def _wait_for_lease(repo: Path) -> str:
    for _ in range(600):
        held = ok(repo, "datastore", "lock", "status")
        if held:
            return held[0]["name"]
        time.sleep(0.1)
    raise AssertionError("the run never took the model's lease")


def _version(doc: dict, name: str = "result") -> int:
    return next(a["version"] for a in doc["dataArtifacts"] if a["name"] == name)


def _content(repo: Path, version: int) -> str:
    return ok(repo, "data", "get", "hello", "result", "--version", str(version))["content"]["stdout"].strip()


def test_a_sync_of_a_failed_runs_version_waits_for_the_lease_so_the_running_peers_number_is_final(proxied,
                                                                                                  tmp_path):
    """The repro renumber_ack_wrong_version: A's run is left unpublished;
    B's run holds the model's lease (its version allocated); A's
    `datastore sync` meanwhile must not publish a version of that model
    without the lease. B is told version N and N holds B's data."""
    proxy, a, b = proxied
    proxy.fail_matching("PUT", "/log/", Fault("status", status=503))
    r = cli(a, "model", "method", "run", "hello", "execute", "--input", "run=echo from-a")
    assert r.code == 1 and r.error["code"] == "unpublished", r
    assert _version(r.data) == 1
    proxy.clear()

    go = tmp_path / "go"
    running = _held_run(b, go, "from-b")
    _wait_for_lease(a)
    syncing = popen(a, "datastore", "sync")
    time.sleep(2)  # A's sync gets to the lease B holds (without the rule it published v1 here)
    go.touch()
    out_b, err_b = running.communicate(timeout=120)
    out_a, err_a = syncing.communicate(timeout=120)
    assert running.returncode == 0, err_b
    assert syncing.returncode == 0, err_a

    import json

    told = json.loads(out_b)
    assert _version(told) == 1
    assert "renumbered" not in told.get("sync", {})  # nothing to learn there: the number is final
    synced = json.loads(out_a)
    assert [(x["from"], x["to"]) for x in synced["renumbered"] if x["versions"].endswith("/result")] == [(1, 2)]
    for peer in (a, b):
        ok(peer, "datastore", "sync")
        assert _content(peer, 1) == "from-b"
        assert _content(peer, 2) == "from-a"
        rec = ok(peer, "model", "output", "get", told["id"])
        assert _version(rec) == 1
        assert ok(peer, "datastore", "conflicts") == []


def test_a_version_a_pull_renumbered_is_reported_as_published_not_as_allocated(proxied):
    """What a command prints is the record as stored after its push: the
    session's pull moved A's unpublished version above B's, and A's next
    run reports the numbers its records and data hold."""
    proxy, a, b = proxied
    proxy.fail_matching("PUT", "/log/", Fault("status", status=503))
    first = cli(a, "model", "method", "run", "hello", "execute", "--input", "run=echo a-1")
    assert first.code == 1 and _version(first.data) == 1
    proxy.clear()
    ok(b, "model", "method", "run", "hello", "execute", "--input", "run=echo b-1")

    second = ok(a, "model", "method", "run", "hello", "execute", "--input", "run=echo a-2")
    assert _version(second) == 3  # above B's 1 and A's own, renumbered to 2
    fresh = peer_from_git(a, a.parent / "fresh")
    ok(fresh, "datastore", "setup", *s3_args_of(a))
    assert [_content(fresh, v) for v in (1, 2, 3)] == ["b-1", "a-1", "a-2"]
    assert _version(ok(fresh, "model", "output", "get", first.data["id"])) == 2
    assert _version(ok(fresh, "model", "output", "get", second["id"])) == 3


def s3_args_of(repo: Path) -> list[str]:
    """The `datastore setup s3` options ``repo`` was set up with."""
    import yaml

    ds = yaml.safe_load((repo / ".swamp.yaml").read_text())["datastore"]
    return ["s3", "--bucket", ds["bucket"], "--prefix", ds["prefix"], "--endpoint-url", ds["endpointUrl"],
            "--region", ds["region"]]


def test_a_lease_released_by_force_is_reported_to_its_holder_as_such(proxied, tmp_path):
    """The repro force_release_fence: the holder hears that its lease was
    released by force (not that its heartbeat stalled), and the epoch
    record in the log says "force release"."""
    _proxy, a, b = proxied
    go = tmp_path / "go"
    holder = _held_run(a, go, "from-a")
    name = _wait_for_lease(b)
    assert ok(b, "datastore", "lock", "release", name, "--force")["released"] is True
    ok(b, "model", "method", "run", "hello", "execute", "--input", "run=echo from-b")
    go.touch()
    _out, err = holder.communicate(timeout=120)
    assert holder.returncode == 1
    import json

    error = json.loads(err)
    assert error["code"] == "lease_lost", error
    assert "released by force" in error["hint"] and "heartbeat stalled" not in error["hint"], error
    commands = [c["command"] for c in ok(b, "datastore", "log")]
    assert f"lease force release {name}" in commands
    assert not any(c.startswith("lease takeover") for c in commands)
    ok(a, "datastore", "sync")
    assert [v["version"] for v in ok(a, "data", "versions", "hello", "result")] == [1]
    assert _content(a, 1) == "from-b"


def test_a_run_whose_remote_was_emptied_meanwhile_is_refused_as_remote_changed(tmp_path, seaweedfs):
    """The repro emptied_mid_run: the refusal keeps its code and its hint
    (attach again), not "unpublished" with a sync that cannot work; the
    record is still printed, with "published": false."""
    args = s3_setup_args(seaweedfs)
    store = seaweedfs.store(args[args.index("--prefix") + 1])
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(a, "datastore", "setup", *args)
    ok(a, "model", "method", "run", "hello", "execute")
    go = tmp_path / "go"
    running = _held_run(a, go, "late")
    _wait_for_lease(a)
    for m in list(store.list("")):
        store.delete(m.key)
    b = init_repo(tmp_path / "b")
    ok(b, "model", "create", "command/shell", "hello", "--global-arg", "run=echo b")
    ok(b, "datastore", "setup", *args)
    for _ in range(3):
        ok(b, "model", "method", "run", "hello", "execute")
    go.touch()
    out, err = running.communicate(timeout=120)
    import json

    assert running.returncode == 1
    error = json.loads(err)
    assert error["code"] == "remote_changed", error
    assert "swamp datastore setup" in error["hint"] and "datastore sync" not in error["hint"], error
    assert json.loads(out)["published"] is False
    assert [m.key.rsplit("/", 1)[1] for m in store.list("default/log/")] == [f"{n:020d}.json" for n in (1, 2, 3)]
