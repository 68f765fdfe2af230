"""`swamp datastore conflicts` on a shared datastore (SeaweedFS): a copy a
sync kept aside is listed, and restoring it publishes ours as a new change
that every peer then has."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo
from tests.helpers import ok, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def test_a_kept_copy_is_listed_and_restoring_it_publishes_ours(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    a, b = init_repo(tmp_path / "a"), init_repo(tmp_path / "b")
    ok(a, "datastore", "setup", *args)
    ok(b, "datastore", "setup", *args)
    ok(a, "config", "set", "tier", "gold", "--offline")
    ok(b, "config", "set", "tier", "silver", "--offline")
    ok(a, "datastore", "sync")
    assert cli(b, "datastore", "sync").code == 1  # the same key changed on both sides

    (entry,) = ok(b, "datastore", "conflicts")
    assert entry["path"] == "config/shared.json" and entry["class"] == "mergeable" and entry["theirs"]
    restored = ok(b, "datastore", "conflicts", "restore", entry["copy"])
    assert restored["published"] is True and restored["sync"]["filesPushed"] == 1
    assert ok(b, "datastore", "conflicts") == []
    for peer in (a, b):
        assert ok(peer, "config", "get", "tier")["value"] == "silver"
    assert ok(b, "datastore", "status")["dirtyFiles"] == 0
