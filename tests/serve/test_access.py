"""Access control through a real server: tokens (401 without one, or with a
revoked one), grants (403 when none allows, deny beats allow), `access
can-i`, and no secret in the audit log or in responses."""

from __future__ import annotations

import json
import os
import stat
import textwrap

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GRANTS = """
grants:
  - subjects: ["group:ops"]
    effect: allow
    actions: [read, run]
    resources: ["model:*", "data:*"]
  - subjects: ["token:intern"]
    effect: deny
    actions: [run]
    resources: ["model:hello"]
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["data:hello/result"]
"""



@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("access") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"ops": mint_token(repo, "ops", "--group", "ops"), "intern": mint_token(repo, "intern", "--group", "ops"),
              "reader": mint_token(repo, "reader"), "gone": mint_token(repo, "gone", "--group", "ops")}
    assert cli(repo, "access", "token", "revoke", "gone").code == 0
    server = Serve(repo, "--auth-mode", "token")
    yield server, tokens
    server.stop()


def test_tokens_are_stored_hashed_and_private(secured):
    server, tokens = secured
    path = server.repo / ".swamp" / "secrets" / "serve" / "tokens.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text()
    for token in tokens.values():
        assert token.split(".", 1)[1] not in text
    listed = cli(server.repo, "access", "token", "list").data
    assert {t["name"]: t["revoked"] for t in listed} == {"gone": True, "intern": False, "ops": False,
                                                          "reader": False}
    assert "token" not in json.dumps(listed).replace('"token"', "")  # no secrets in the listing


def test_no_token_or_a_revoked_one_is_401(secured):
    server, tokens = secured
    none = server.get(f"{API}/data")
    assert none.status == 401 and none.error["code"] == "unauthorized"
    assert none.headers.get("www-authenticate") == "Bearer"
    assert server.get(f"{API}/data", token=tokens["gone"]).status == 401
    assert server.get(f"{API}/data", token="ops.not-the-secret").status == 401
    assert server.get("/health").status == 200  # liveness needs no token


def test_grants_allow_deny_and_deny_wins(secured):
    server, tokens = secured
    ran = server.run_method("hello", "execute", token=tokens["ops"])  # its own `run`: replacing it needs write
    assert ran.status == 200 and ran.doc["status"] == "succeeded"
    denied = server.run_method("hello", "execute", token=tokens["intern"])
    assert denied.status == 403 and denied.error["code"] == "forbidden"  # deny beats the group's allow
    assert server.get(f"{API}/data/hello/result", token=tokens["intern"]).status == 200  # read still allowed
    assert server.run_method("hello", "execute", token=tokens["reader"]).status == 403  # no grant at all
    assert server.get(f"{API}/data/hello/result", token=tokens["reader"]).status == 200
    assert server.get(f"{API}/data/hello/log", token=tokens["reader"]).status == 403
    # lists show only what the caller may read
    assert [r["name"] for r in server.get(f"{API}/data", token=tokens["reader"]).doc] == ["result"]
    assert {r["name"] for r in server.get(f"{API}/data", token=tokens["ops"]).doc} == {"log", "result"}


def test_a_revoked_token_stops_at_once_and_rotate_replaces_the_secret(secured):
    server, tokens = secured
    old = mint_token(server.repo, "temp", "--group", "ops")
    assert server.get(f"{API}/data", token=old).status == 200
    new = cli(server.repo, "access", "token", "rotate", "temp").data["token"]
    assert server.get(f"{API}/data", token=old).status == 401
    assert server.get(f"{API}/data", token=new).status == 200
    assert cli(server.repo, "access", "token", "revoke", "temp").code == 0
    assert server.get(f"{API}/data", token=new).status == 401


def test_can_i(secured):
    server, _ = secured
    yes = cli(server.repo, "access", "can-i", "run", "model:hello", "--token", "ops")
    assert yes.code == 0 and yes.data["allowed"] is True
    no = cli(server.repo, "access", "can-i", "run", "model:hello", "--token", "intern")
    assert no.code == 1 and no.data["allowed"] is False and no.data["decidedBy"]["effect"] == "deny"
    none = cli(server.repo, "access", "can-i", "write", "data:hello/x", "--subject", "user:bob")
    assert none.code == 1 and none.data["decidedBy"] is None


def test_no_secret_in_the_audit_log_or_responses(secured):
    server, tokens = secured
    server.run_method("hello", "execute", {"run": "echo hi", "password": "hunter2-very-secret"},
                      token=tokens["ops"])
    server.run_method("hello", "execute", {"run": "echo hi"}, token=tokens["intern"])
    server.get(f"{API}/data", token=tokens["gone"])
    log = (server.repo / ".swamp" / "cache" / "serve" / "audit.jsonl").read_text()
    entries = [json.loads(line) for line in log.splitlines()]
    assert {"who", "at", "status", "path"} <= set(entries[-1])
    assert any(e["status"] == 403 and e["who"][0] == "token:intern" for e in entries)
    assert any(e["status"] == 401 for e in entries)
    assert "hunter2-very-secret" not in log
    for token in tokens.values():
        assert token.split(".", 1)[1] not in log
    reply = server.get(f"{API}/data/hello/result", token=tokens["ops"])
    for token in tokens.values():
        assert token.split(".", 1)[1] not in json.dumps(reply.doc)


def test_auth_none_is_refused_off_loopback(tmp_path):
    repo = init_repo(tmp_path / "repo")
    r = cli(repo, "serve", "--host", "0.0.0.0", "--auth-mode", "none")
    assert r.code == 2 and r.error["code"] == "usage" and "--insecure" in r.error["hint"]


def test_runs_over_the_limit_are_refused_with_429(tmp_path):
    import threading
    import time

    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    server = Serve(repo, "--max-runs-per-caller", "1")
    try:
        slow = threading.Thread(target=server.run_method, args=("hello", "execute", {"run": "sleep 1.5"}))
        slow.start()
        deadline = time.monotonic() + 20
        while server.get("/health").doc["inflight"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        refused = server.run_method("hello", "execute", {"run": "echo second"})
        assert refused.status == 429 and refused.error["code"] == "too_many_runs"
        assert server.get(f"{API}/data").status == 200  # reads are not runs
        slow.join(30)
        assert server.run_method("hello", "execute", {"run": "echo third"}).status == 200
    finally:
        server.stop()
