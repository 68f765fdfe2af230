"""A bucket restored from an older copy (issue 24, N5; the repro
rewound_bucket), through the `swamp` command on SeaweedFS: the peers whose
commands are refused attach again as the hint says, and each republishes
only its own work. A fresh peer then sees every run's data exactly once,
at contiguous versions, and no conflict was raised."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, ok, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _peer(path, args, first: bool = False):
    repo = init_repo(path)
    if first:
        ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo seed")
    ok(repo, "datastore", "setup", *args)
    ok(repo, "datastore", "config", "migrate")
    return repo


def _run(repo, text: str) -> int:
    doc = ok(repo, "model", "method", "run", "hello", "execute", "--input", f"run=echo {text}")
    return next(a["version"] for a in doc["dataArtifacts"] if a["name"] == "result")


def _versions(repo) -> list[tuple[int, str]]:
    out = []
    for v in sorted(x["version"] for x in ok(repo, "data", "versions", "hello", "result")):
        got = ok(repo, "data", "get", "hello", "result", "--version", str(v))
        out.append((v, got["content"]["stdout"].strip()))
    return out


def test_peers_attaching_again_to_a_rewound_bucket_republish_only_their_own_work(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    store = seaweedfs.store(args[args.index("--prefix") + 1])
    s = _peer(tmp_path / "s", args, first=True)
    a, b = _peer(tmp_path / "a", args), _peer(tmp_path / "b", args)
    assert _run(s, "S-1") == 1
    snapshot = {m.key: store.get(m.key)[0] for m in store.list("")}
    assert (_run(a, "A-2"), _run(a, "A-3")) == (2, 3)
    ok(b, "datastore", "sync")  # B holds copies of A's versions

    for m in list(store.list("")):
        store.delete(m.key)
    for key, data in snapshot.items():  # restored from the copy: same bytes, so the same ETags
        store.put(key, data)
    assert _run(s, "S-new") == 2  # its head is the copy's: it goes on

    for peer in (b, a):  # the copy holder first: the harder order
        refused = cli(peer, "model", "method", "run", "hello", "execute", "--input", "run=echo never")
        assert refused.code == 1 and refused.error["code"] == "remote_changed", refused
        again = ok(peer, "datastore", "setup", *args)
        assert again["conflicts"] == [], again
    setup_b = again  # (the last one is A's)
    assert setup_b["renumbered"]  # A's own versions, above S's new 2

    for peer in (s, a, b):
        assert ok(peer, "datastore", "sync")["conflicts"] == []
    fresh = _peer(tmp_path / "fresh", args)
    wanted = [(1, "S-1"), (2, "S-new"), (3, "A-2"), (4, "A-3")]
    assert _versions(fresh) == wanted
    for peer in (s, a, b):
        assert _versions(peer) == wanted
    assert ok(fresh, "datastore", "verify")["ok"] is True
    for peer in (a, b):
        assert ok(peer, "datastore", "conflicts") == []
