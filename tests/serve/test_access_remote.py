"""`swamp access grant|group|check --server URL`: a token with admin on
access:grants / access:groups administers access on the server's
checkout, with the same output as on a checkout; the server enforces it at
once. (A token without admin is refused: tests/serve/test_grant_table.py
rows listGrants ... removeGroupMember, and test_access_admin.py.)"""

from __future__ import annotations

import textwrap

from tests.helpers import cli, init_repo
from tests.serve.server import Serve, mint_token

GRANTS = """
grants:
  - subjects: ["token:keeper"]
    actions: [admin]
    resources: ["access:grants", "access:groups"]
"""


def test_an_admin_token_administers_access_over_http(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    keeper, ci = mint_token(repo, "keeper"), mint_token(repo, "ci")
    server = Serve(repo, "--auth-mode", "token")

    def far(*args, json=True):
        r = cli(None, "access", *args, "--server", server.url, "--token", keeper, json=json, cwd=tmp_path)
        assert r.code in (0, 1, 2), r  # 1: refused or invalid, 2: usage
        return r

    try:
        assert server.get("/api/v1/models/hello", token=ci).status == 403
        made = far("grant", "create", "--subject", "group:readers", "--allow", "read", "--on", "model:*").data
        assert made["created"] and made["source"] == "datastore:access/grants.json"
        far("group", "create", "readers")
        far("group", "add-member", "readers", "token:ci")
        assert server.get("/api/v1/models/hello", token=ci).status == 200
        assert far("group", "members", "readers").data["members"] == ["token:ci"]
        assert [g["name"] for g in far("group", "list").data] == ["readers"]
        listed = far("grant", "list").data
        assert listed == cli(repo, "access", "grant", "list").data  # the same as on the checkout
        told = far("check", "--subject", "token:ci", "--action", "read", "--on", "model:hello")
        assert told.code == 0 and told.data["decidedBy"]["id"] == made["id"]
        text = far("grant", "list", json=False)
        assert made["id"] in text.stdout and "grants/team.yaml" in text.stdout

        far("group", "remove-member", "readers", "token:ci")
        assert server.get("/api/v1/models/hello", token=ci).status == 403
        far("grant", "revoke", made["id"])
        assert made["id"] not in [g["id"] for g in cli(repo, "access", "grant", "list").data]
        bad = far("grant", "create", "--subject", "nobody", "--allow", "read", "--on", "model:*")
        assert bad.code == 1 and bad.error["code"] == "validation"
        asked_as = far("check", "--action", "read", "--on", "model:hello")  # no --subject: --token is the credential
        assert asked_as.error["code"] == "usage"
    finally:
        server.stop()
