"""Work a lost lease kept aside (`.swamp/.sync/lost-lease/`, the only copy,
named in the failed command's error) survives every command that starts
the cache afresh as a new peer, and the command says it is still there.
(`namespace set|migrate` are in tests/review/test_namespace_move_keeps_lost_lease_work.py.)"""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, ok

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _setup(seaweedfs, prefix: str) -> list[str]:
    return ["datastore", "setup", "s3", "--bucket", seaweedfs.bucket, "--prefix", prefix, "--endpoint-url",
            seaweedfs.endpoint_url, "--region", "us-east-1"]


def test_setup_onto_another_remote_keeps_lost_lease_work_and_says_so(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    first = ok(repo, *_setup(seaweedfs, seaweedfs.new_prefix()))
    assert first["lostLeaseFolders"] == 0 and first["lostLeaseDir"] is None
    kept = repo / ".swamp" / ".sync" / "lost-lease" / "20261130T230000Z-model-x-abc123" / "data" / "raw"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"the only copy of a run's output")

    moved = ok(repo, *_setup(seaweedfs, seaweedfs.new_prefix()))  # another remote: the sync state starts afresh
    assert kept.read_bytes() == b"the only copy of a run's output"
    assert moved["lostLeaseFolders"] == 1 and moved["lostLeaseDir"].endswith("lost-lease")

    human = cli(repo, *_setup(seaweedfs, seaweedfs.new_prefix()), json=False)
    assert human.code == 0, human
    assert "1 folder(s) of work set aside under lost leases" in human.stdout + human.stderr
    assert kept.read_bytes() == b"the only copy of a run's output"


def test_namespace_set_says_lost_lease_work_is_still_there(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    ok(repo, *_setup(seaweedfs, seaweedfs.new_prefix()), "--namespace", "team-a")
    kept = repo / ".swamp" / ".sync" / "lost-lease" / "20261130T230000Z-model-x-abc123" / "data" / "raw"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"kept")
    r = cli(repo, "datastore", "namespace", "set", "team-b", "-y", json=False)
    assert r.code == 0, r
    assert "1 folder(s) of work set aside under lost leases" in r.stdout + r.stderr
    assert kept.read_bytes() == b"kept"
