"""`swamp access grant|group|check` on one checkout, and a server of it
enforcing what they write: grants made by command (sorted, idempotent,
revocable; a grant in grants/*.yaml is only changed in its file), groups
whose members a `group:` grant reaches, `check` naming the grant that
decided. A command never writes a document in the wrong shape, and a
server refuses a broken one with 503 naming it. Over HTTP, a token without
admin on access:grants cannot change them (tests/serve/test_access_remote.py
has the rest)."""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from tests.helpers import cli, init_repo, ok
from tests.serve.server import Serve, mint_token

FILE_GRANTS = """
grants:
  - subjects: ["token:intern"]
    effect: deny
    actions: [read]
    resources: ["model:hello"]
"""
MODEL = "/api/v1/models/hello"


def eventually(check, what: str, patience_s: float = 30) -> None:
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"{what}: not so after {patience_s} s")


@pytest.fixture
def repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(FILE_GRANTS).lstrip())
    return repo


def grants_doc(repo):
    path = repo / ".swamp" / "access" / "grants.json"
    return path.read_text() if path.exists() else None


def test_grants_by_command_are_listed_sorted_made_once_and_revoked(repo):
    made = ok(repo, "access", "grant", "create", "--subject", "group:ops", "--subject", "user:alice",
              "--allow", "run,read", "--on", "workflow:deploy-*", "--description", "deployers")
    assert made["created"] and made["id"].startswith("g-") and made["actions"] == ["read", "run"]
    again = ok(repo, "access", "grant", "create", "--subject", "user:alice", "--subject", "group:ops",
               "--allow", "read,run", "--on", "workflow:deploy-*", "--description", "deployers")
    assert again["id"] == made["id"] and again["created"] is False
    listed = ok(repo, "access", "grant", "list")
    assert [g["source"] for g in listed] == ["datastore:access/grants.json", "grants/team.yaml"]
    assert ok(repo, "access", "grant", "list", "--subject", "token:intern")[0]["effect"] == "deny"
    assert ok(repo, "access", "grant", "list", "--on", "model:none") == []

    in_file = listed[1]["id"]
    refused = cli(repo, "access", "grant", "revoke", in_file)
    assert refused.code == 1 and "grants/team.yaml" in refused.error["error"]
    gone = ok(repo, "access", "grant", "revoke", made["id"])
    assert gone["revoked"] and [g["id"] for g in ok(repo, "access", "grant", "list")] == [in_file]
    missing = cli(repo, "access", "grant", "revoke", made["id"])
    assert missing.code == 1 and missing.error["code"] == "not_found"


@pytest.mark.parametrize("args,says", [
    (["--subject", "alice", "--allow", "read", "--on", "model:*"], "token:NAME, user:NAME or group:NAME"),
    (["--subject", "user:a", "--allow", "read,fly", "--on", "model:*"], "unknown action"),
    (["--subject", "user:a", "--allow", "read", "--on", "host:*"], "must start with one of"),
    (["--subject", "user:a", "--allow", "read", "--deny", "run", "--on", "model:*"], "one of --allow"),
    (["--subject", "user:a", "--on", "model:*"], "one of --allow"),
    (["--subject", "user:a", "--allow", "read", "--on", "model:*", "--when", "true"], "not supported"),
])
def test_a_grant_in_the_wrong_shape_is_never_written(repo, args, says):
    ok(repo, "access", "grant", "create", "--subject", "user:bob", "--allow", "read", "--on", "model:*")
    before = grants_doc(repo)
    r = cli(repo, "access", "grant", "create", *args)
    assert r.code in (1, 2) and says in r.error["error"], r
    assert grants_doc(repo) == before


def test_groups_members_and_the_idp_that_is_not_there(repo):
    ok(repo, "access", "group", "create", "ops", "--description", "on call")
    assert cli(repo, "access", "group", "create", "ops").error["code"] == "conflict"
    ok(repo, "access", "group", "add-member", "ops", "user:zoe")
    ok(repo, "access", "group", "add-member", "ops", "token:ci")
    assert ok(repo, "access", "group", "members", "ops")["members"] == ["token:ci", "user:zoe"]
    assert cli(repo, "access", "group", "add-member", "ops", "group:other").code == 1  # no groups in groups
    assert cli(repo, "access", "group", "add-member", "nope", "user:zoe").error["code"] == "not_found"
    ok(repo, "access", "group", "create", "aa")
    assert [g["name"] for g in ok(repo, "access", "group", "list")] == ["aa", "ops"]
    ok(repo, "access", "group", "remove-member", "ops", "user:zoe")
    assert ok(repo, "access", "group", "members", "ops")["members"] == ["token:ci"]
    assert cli(repo, "access", "group", "remove-member", "ops", "user:zoe").error["code"] == "not_found"
    idp = cli(repo, "access", "group", "list-idp", json=False)
    assert idp.code == 0 and "no identity provider is configured" in idp.stdout
    assert ok(repo, "access", "group", "list-idp")["identityProvider"] is None


def test_check_explains_which_grant_decided(repo):
    made = ok(repo, "access", "grant", "create", "--subject", "group:ops", "--allow", "read", "--on", "model:*")
    ok(repo, "access", "group", "create", "ops")
    ok(repo, "access", "group", "add-member", "ops", "token:intern")
    mint_token(repo, "intern")
    yes = cli(repo, "access", "check", "--subject", "group:ops", "--action", "read", "--on", "model:other")
    assert yes.code == 0 and yes.data["decidedBy"]["id"] == made["id"]
    denied = cli(repo, "access", "check", "--token", "intern", "--action", "read", "--on", "model:hello")
    assert denied.code == 1 and denied.data["decidedBy"]["source"] == "grants/team.yaml"
    assert "group:ops" in denied.data["subjects"]  # through its membership
    assert {g["effect"] for g in denied.data["matched"]} == {"allow", "deny"}
    nothing = cli(repo, "access", "check", "--subject", "user:x", "--action", "run", "--on", "model:hello",
                  json=False)
    assert nothing.code == 1 and "no grant allows run on model:hello" in nothing.stdout


def test_a_server_enforces_grants_and_groups_made_by_command(repo):
    ci = mint_token(repo, "ci")
    admin = mint_token(repo, "root")
    ok(repo, "access", "grant", "create", "--subject", "token:root", "--allow", "admin", "--on", "*")
    server = Serve(repo, "--auth-mode", "token")
    try:
        assert server.get(MODEL, token=ci).status == 403
        ok(repo, "access", "group", "create", "readers")
        made = ok(repo, "access", "grant", "create", "--subject", "group:readers", "--allow", "read",
                  "--on", "model:*")
        ok(repo, "access", "group", "add-member", "readers", "token:ci")
        eventually(lambda: server.get(MODEL, token=ci).status == 200, "the new grant and membership hold")
        ok(repo, "access", "grant", "revoke", made["id"])
        eventually(lambda: server.get(MODEL, token=ci).status == 403, "the revoked grant stops")

        # Over HTTP only a token with admin on access:grants changes them: ci cannot grant itself more.
        mine = cli(None, "access", "grant", "create", "--subject", "token:ci", "--allow", "admin",
                   "--on", "*", "--server", server.url, "--token", ci, cwd=repo.parent)
        assert mine.code == 1 and mine.error["code"] == "forbidden"
        assert server.get(MODEL, token=ci).status == 403

        # A document broken by hand: every request refused, naming it.
        doc = repo / ".swamp" / "access" / "grants.json"
        broken = json.loads(doc.read_text())
        broken["grants"]["g-000000000000"] = {"subjects": ["token:ci"], "actions": ["admin"], "resources": ["*"]}
        doc.write_text(json.dumps(broken))
        eventually(lambda: server.get(MODEL, token=admin).status == 503, "a broken document refuses")
        refused = server.get(MODEL, token=admin).error
        assert refused["code"] == "access_broken" and "access/grants.json" in refused["error"]
    finally:
        server.stop()


def test_access_documents_are_never_writable_by_other_users(tmp_path):
    """Under umask 000 (some CI runners) a grant made by command is still
    not writable by other users of the machine; a server refuses a
    document that is (503, naming it): anyone could have granted anything."""
    import os
    import stat

    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    admin = mint_token(repo, "root")
    old = os.umask(0)
    try:
        ok(repo, "access", "grant", "create", "--subject", "token:root", "--allow", "admin", "--on", "*")
    finally:
        os.umask(old)
    doc = repo / ".swamp" / "access" / "grants.json"
    for p in (doc, doc.parent):
        assert not stat.S_IMODE(os.stat(p).st_mode) & (stat.S_IWGRP | stat.S_IWOTH), oct(os.stat(p).st_mode)
    server = Serve(repo, "--auth-mode", "token")
    try:
        assert server.get(MODEL, token=admin).status == 200
        os.chmod(doc, 0o666)
        refused = server.get(MODEL, token=admin)
        assert refused.status == 503 and refused.error["code"] == "access_broken"
        assert "grants.json can be changed by every user" in refused.error["error"]
        os.chmod(doc, 0o644)
        assert server.get(MODEL, token=admin).status == 200
    finally:
        server.stop()
