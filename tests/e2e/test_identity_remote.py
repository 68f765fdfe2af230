"""A remote that is another one, or was emptied (issue 9 item 6), through the
`swamp` command: refused with a hint, nothing published; `datastore setup`
attaches again and republishes what the remote lacks, so a new peer can join."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import cli
from tests.helpers import ok, peer_from_git, repo_with_hello_runs, s3_setup_args

pytestmark = pytest.mark.slow


def _set_namespace(repo: Path, namespace: str) -> None:
    cfg = repo / ".swamp.yaml"
    text, n = re.subn(r"(?m)^(\s*namespace:\s*).*$", rf"\g<1>{namespace}", cfg.read_text())
    assert n == 1
    cfg.write_text(text)


def _keys(store, under: str) -> list[str]:
    return [m.key for m in store.list(under)]


def test_another_or_emptied_remote_is_refused_then_setup_republishes(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    prefix = args[args.index("--prefix") + 1]
    store = seaweedfs.store(prefix)
    a = repo_with_hello_runs(tmp_path / "a", 2)
    ok(a, "datastore", "setup", *args)

    # the namespace edited in .swamp.yaml (a committed file): refused
    _set_namespace(a, "other")
    r = cli(a, "model", "method", "run", "hello", "execute", "--input", "run=echo lost")
    assert r.code != 0 and r.error["code"] == "remote_changed", r
    assert "swamp datastore setup" in r.error["hint"]
    assert _keys(store, "other/log/") == [] and _keys(store, "other/blobs/") == []
    _set_namespace(a, "default")

    # the prefix emptied: refused, nothing published
    for key in _keys(store, ""):
        store.delete(key)
    r = cli(a, "model", "method", "run", "hello", "execute", "--input", "run=echo lost")
    assert r.code != 0 and r.error["code"] == "remote_changed", r
    assert _keys(store, "") == []

    # setup again: republished, and a new peer joins
    again = ok(a, "datastore", "setup", *args)
    assert again["filesPushed"] > 0
    b = peer_from_git(a, tmp_path / "b")
    joined = ok(b, "datastore", "setup", *args)
    assert joined["filesPulled"] == again["filesPushed"]
    assert ok(b, "data", "get", "hello", "result")["content"]["stdout"] == "a1"
    assert ok(b, "datastore", "verify")["ok"]
    ok(a, "model", "method", "run", "hello", "execute", "--input", "run=echo after")
    assert ok(b, "data", "get", "hello", "result")["content"]["stdout"] == "after"
