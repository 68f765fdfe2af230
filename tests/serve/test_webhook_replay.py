"""Webhook replay protection on two replicas sharing SeaweedFS: a delivery
is run once whichever replica it reaches; sent again (to either) it is 409
and runs nothing; a timestamp outside the window, or a signature that
does not cover the timestamp and delivery id, is 401."""

from __future__ import annotations

import json
import shutil
import textwrap
import time

import pytest

from swamp.serve.webhooks import sign, signed_headers
from tests.helpers import init_repo, ok, s3_setup_args
from tests.serve.server import Serve
from tests.serve.test_webhooks import GREET, SECRET


def _settled(repo, n: int):
    deadline = time.monotonic() + 60
    while True:
        history = ok(repo, "workflow", "history", "greet")
        if len(history) >= n and all(h["status"] not in ("running", "pending") for h in history):
            return history
        assert time.monotonic() < deadline, history
        time.sleep(0.3)


@pytest.mark.s3
def test_a_replayed_or_stale_delivery_is_refused_on_every_replica(tmp_path, seaweedfs):
    first = init_repo(tmp_path / "r0")
    ok(first, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    (first / "workflows").mkdir(exist_ok=True)
    (first / "workflows" / "workflow-greet.yaml").write_text(textwrap.dedent(GREET).lstrip())
    second = init_repo(tmp_path / "r1")
    for d in ("models", "workflows"):
        shutil.copytree(first / d, second / d, dirs_exist_ok=True)
    setup = s3_setup_args(seaweedfs)
    for r in (first, second):
        ok(r, "datastore", "setup", *setup)
    env = {"SWAMP_WEBHOOK_GH_SECRET": SECRET}
    a, b = Serve(first, "--webhook", "gh=greet", env=env), Serve(second, "--webhook", "gh=greet", env=env)
    try:
        body = json.dumps({"who": "once"}).encode()
        headers = signed_headers(SECRET, body, webhook="gh", delivery="evt-0001")
        assert a.request("POST", "/hooks/gh", raw=body, headers=headers).status == 202
        for server in (a, b):  # the same request again, to either replica
            again = server.request("POST", "/hooks/gh", raw=body, headers=headers)
            assert again.status == 409 and again.error["code"] == "conflict"
            assert "evt-0001" in again.error["error"] and "already received" in again.error["error"]

        stale = signed_headers(SECRET, body, webhook="gh", timestamp=int(time.time()) - 3600, delivery="evt-0002")
        old = b.request("POST", "/hooks/gh", raw=body, headers=stale)
        assert old.status == 401 and " s old; at most 300 s" in old.error["error"] and old.error["hint"]

        # A fresh timestamp pasted onto an old signature: the signature does not match.
        forged = dict(stale, **{"X-Swamp-Timestamp": str(int(time.time()))})
        assert b.request("POST", "/hooks/gh", raw=body, headers=forged).status == 401
        # The body alone signed (no timestamp, no delivery): refused, with the scheme in the hint.
        bare = b.request("POST", "/hooks/gh", raw=body,
                         headers={"X-Swamp-Signature-256": sign(SECRET, body, webhook="gh")})
        assert bare.status == 401 and "X-Swamp-Timestamp".lower() in bare.error["hint"].lower()

        assert b.request("POST", "/hooks/gh", raw=body,
                         headers=signed_headers(SECRET, body, webhook="gh")).status == 202
    finally:
        a.stop()
        b.stop()
    history = _settled(first, 2)
    assert len(history) == 2 and all(h["status"] == "succeeded" for h in history)  # the first, and the new one
