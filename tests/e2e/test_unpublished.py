"""A command whose work succeeded here but whose push failed (the server
answers errors to every commit): it says so (its record with
"published": false on stdout, an `unpublished` error with a hint on
stderr, exit 1), keeps the work, and the next command that changes state
publishes it. Through the `swamp` command, against SeaweedFS behind a
fault proxy."""

from __future__ import annotations

import pytest

from tests.fixtures.faultproxy import Fault
from tests.helpers import cli, ok

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _unpublished(r):
    assert r.code == 1, r
    assert r.error["code"] == "unpublished", r.error
    assert "swamp datastore sync" in r.error["hint"]
    return r.data


def test_a_method_run_whose_push_fails_says_so_and_the_next_sync_publishes_it(proxied):
    proxy, a, b = proxied
    ok(a, "model", "method", "run", "hello", "execute")
    proxy.fail_matching("PUT", "/log/", Fault("status", status=503))
    rec = _unpublished(cli(a, "model", "method", "run", "hello", "execute"))
    assert rec["status"] == "succeeded" and rec["published"] is False
    assert rec["dataArtifacts"][0]["version"] == 2
    assert ok(a, "datastore", "status", "--offline")["dirtyFiles"] > 0
    plain = cli(a, "datastore", "status", "--offline", json=False)
    assert "are not published yet" in plain.stdout and "swamp datastore sync" in plain.stdout
    assert ok(b, "data", "get", "hello", "result")["version"] == 1  # not published yet

    proxy.clear()
    ok(a, "datastore", "sync")
    assert ok(a, "datastore", "status")["dirtyFiles"] == 0
    assert "unpublished: nothing" in cli(a, "datastore", "status", json=False).stdout
    assert ok(b, "data", "get", "hello", "result")["version"] == 2


def test_data_gc_run_again_after_a_failed_push_publishes_the_deletes(proxied):
    proxy, a, b = proxied
    for _ in range(12):  # the shell type keeps 10 versions of its result
        ok(a, "model", "method", "run", "hello", "execute")
    assert [v["version"] for v in ok(b, "data", "versions", "hello", "result")][:2] == [1, 2]

    proxy.fail_matching("PUT", "/log/", Fault("status", status=503))
    report = _unpublished(cli(a, "data", "gc", "-y"))
    assert {(d["name"], d["version"]) for d in report["deleted"]} >= {("result", 1), ("result", 2)}
    assert [v["version"] for v in ok(b, "data", "versions", "hello", "result")][:2] == [1, 2]

    proxy.clear()
    again = ok(a, "data", "gc", "-y")  # nothing left to collect here, but the deletes go out
    assert again["deleted"] == []
    assert [v["version"] for v in ok(b, "data", "versions", "hello", "result")][0] == 3
