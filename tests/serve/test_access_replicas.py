"""Tokens, grants and groups shared by every replica (issue 26): two
`swamp serve` replicas, each in its own checkout on one SeaweedFS bucket.
A token minted on one checkout is accepted by the other replica, a revoke
on either is refused by both, a grant made by `access grant create` on one
is enforced by the other, and two checkouts changing the access documents
at once both keep their change. The bound the docs state (5 s) is not
asserted (no timings in tests): each wait is generous, and what it waits
for is a refusal or an acceptance a user would see."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import cli, init_repo, ok, s3_setup_args
from tests.serve.server import Serve, mint_token

MODEL = "/api/v1/models/hello"
#: far above the stated bound, so a busy machine does not fail the test
PATIENCE_S = 60


def eventually(what: str, check) -> None:
    deadline = time.monotonic() + PATIENCE_S
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last is True:
            return
        time.sleep(0.25)
    pytest.fail(f"{what}: still not so after {PATIENCE_S} s (last: {last})")


def status(server: Serve, token: str) -> int:
    return server.get(MODEL, token=token).status


@pytest.fixture
def replicas(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    assert cli(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    ok(a, "datastore", "setup", *setup)
    b = init_repo(tmp_path / "b")
    shutil.copytree(a / "models", b / "models", dirs_exist_ok=True)  # definitions come from git
    ok(b, "datastore", "setup", *setup)
    servers = [Serve(a, "--auth-mode", "token"), Serve(b, "--auth-mode", "token")]
    yield a, b, servers
    for s in servers:
        s.stop()


@pytest.mark.slow
@pytest.mark.s3
def test_tokens_and_grants_made_on_one_replica_hold_on_the_other(replicas):
    a, b, (serve_a, serve_b) = replicas
    ci = mint_token(a, "ci")
    assert not (b / ".swamp" / "secrets" / "serve" / "tokens.json").exists()  # nothing copied by hand

    # minted on a's checkout: b knows it (403: no grant yet, but not 401)
    eventually("b accepts a token minted on a", lambda: status(serve_b, ci) == 403 or status(serve_b, ci))
    # a grant made on a is enforced by b
    made = ok(a, "access", "grant", "create", "--subject", "token:ci", "--allow", "read", "--on", "model:*")
    eventually("b enforces a grant created on a", lambda: status(serve_b, ci) == 200 or status(serve_b, ci))
    assert status(serve_a, ci) == 200

    # revoked on b's checkout: refused by both
    ok(b, "access", "token", "revoke", "ci")
    eventually("b refuses the revoked token", lambda: status(serve_b, ci) == 401 or status(serve_b, ci))
    eventually("a refuses a token revoked on b", lambda: status(serve_a, ci) == 401 or status(serve_a, ci))

    # the grant revoked on b: a mints another token to ask with, a refuses it
    ops = mint_token(a, "ops")
    ok(b, "access", "grant", "create", "--subject", "group:ops", "--allow", "read", "--on", "model:hello")
    ok(b, "access", "group", "create", "ops")
    ok(b, "access", "group", "add-member", "ops", "token:ops")
    eventually("a honours a group made on b", lambda: status(serve_a, ops) == 200 or status(serve_a, ops))
    ok(a, "access", "grant", "revoke", made["id"])
    ok(a, "access", "group", "remove-member", "ops", "token:ops")
    eventually("b enforces a membership removed on a", lambda: status(serve_b, ops) == 403 or status(serve_b, ops))

    # tokens are in the datastore as hashes only
    listed = ok(b, "access", "token", "list")
    assert {t["name"]: t["revoked"] for t in listed} == {"ci": True, "ops": False}
    docs = [p for p in (b / ".swamp").rglob("tokens.json") if p.parent.name == "access"]
    assert docs and all(ops.split(".", 1)[1] not in p.read_text() and "sha256" in p.read_text() for p in docs)


@pytest.mark.slow
@pytest.mark.s3
def test_two_checkouts_minting_and_granting_at_once_lose_nothing(replicas):
    a, b, (serve_a, serve_b) = replicas
    names = [("a", a, f"from-a-{i}") for i in range(3)] + [("b", b, f"from-b-{i}") for i in range(3)]

    def mint_and_grant(item):
        _, repo, name = item
        token = mint_token(repo, name)
        ok(repo, "access", "grant", "create", "--subject", f"token:{name}", "--allow", "read", "--on", "model:*")
        ok(repo, "access", "group", "create", name)
        return name, token

    with ThreadPoolExecutor(len(names)) as pool:
        minted = dict(pool.map(mint_and_grant, names))

    for repo in (a, b):
        assert cli(repo, "datastore", "sync").code == 0
        assert sorted(t["name"] for t in ok(repo, "access", "token", "list")) == sorted(minted)
        granted = sorted(s for g in ok(repo, "access", "grant", "list") for s in g["subjects"])
        assert granted == sorted(f"token:{n}" for n in minted)
        assert sorted(g["name"] for g in ok(repo, "access", "group", "list")) == sorted(minted)
    for name, token in minted.items():
        for server in (serve_a, serve_b):
            eventually(f"{server.url} accepts {name} with its grant", lambda: status(server, token) == 200
                       or status(server, token))
