"""`swamp datastore upgrade` on a remote set up with sync format 1 (by a
swamp that does not read contents inline): afterwards a method run's small
outputs travel inline in its commit (no blob), a peer still reads
everything. It asks before it changes anything (-y without a terminal).
(Older swamps refused: tests/unit/sync/test_format_upgrade.py.)"""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli, ok, peer_from_git, repo_with_hello_runs, s3_setup_args

pytestmark = pytest.mark.slow


def _blobs(store) -> set[str]:
    return {m.key for m in store.list("default/blobs/")}


def test_a_format_1_remote_is_upgraded_and_then_takes_contents_inline(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    prefix = args[args.index("--prefix") + 1]
    store = seaweedfs.store(prefix)
    store.put("default/format.json", json.dumps({"format": "swamp-sync", "version": 1,
                                                 "createdAt": "2026-01-01T00:00:00Z"}).encode(), if_none_match=True)
    a = repo_with_hello_runs(tmp_path / "a", 1)
    ok(a, "datastore", "setup", *args)
    before = _blobs(store)
    ok(a, "model", "method", "run", "hello", "execute", "--input", "run=echo format-1")
    assert _blobs(store) - before, "format 1: contents are blobs"

    r = cli(a, "datastore", "upgrade")
    assert r.code != 0 and "-y" in (r.error["error"] + r.error.get("hint", "")), r  # asks first
    out = ok(a, "datastore", "upgrade", "-y")
    assert out["from"] == 1 and out["upgraded"] is True and out["to"] >= 3
    assert json.loads(store.get("default/format.json")[0])["version"] == out["to"]

    blobs = _blobs(store)
    ok(a, "model", "method", "run", "hello", "execute", "--input", "run=echo inline")
    assert _blobs(store) == blobs, "after the upgrade, small contents travel inline"
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *args)
    assert ok(b, "data", "get", "hello", "result")["content"]["stdout"] == "inline"
    assert ok(b, "datastore", "verify")["ok"]
    again = ok(b, "datastore", "upgrade", "-y")
    assert again["upgraded"] is False and again["seq"] is None
