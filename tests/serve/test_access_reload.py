"""`swamp access reload`: checks the grants and tokens here, or, with
--server, has the server read them again now (admin only); a broken
grants file is reported with its error, locally and by the server."""

from __future__ import annotations

import textwrap

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

GRANTS = """
grants:
  - subjects: ["token:boss"]
    actions: [admin]
    resources: ["*"]
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["model:*"]
"""


def test_access_reload_locally_and_on_a_server(tmp_path):
    repo = init_repo(tmp_path / "repo")
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    boss = cli(repo, "access", "token", "mint", "boss").data["token"]
    reader = cli(repo, "access", "token", "mint", "reader").data["token"]
    here = cli(repo, "access", "reload")
    assert here.code == 0 and here.data == {"grants": 2, "files": ["grants/team.yaml"], "groups": 0, "tokens": 2,
                                           "revoked": 0}

    server = Serve(repo, "--auth-mode", "token")
    try:
        far = cli(None, "access", "reload", "--server", server.url, "--token", boss, cwd=tmp_path)
        assert far.code == 0 and far.data == here.data
        text = cli(None, "access", "reload", "--server", server.url, "--token", boss, json=False, cwd=tmp_path)
        assert text.code == 0 and "reloaded on the server: 2 grant(s) from grants/team.yaml" in text.stdout
        denied = cli(None, "access", "reload", "--server", server.url, "--token", reader, cwd=tmp_path)
        assert denied.code == 1 and denied.error["code"] == "forbidden"
        nobody = server.post("/api/v1/access/reload")
        assert nobody.status == 401

        assert cli(repo, "access", "token", "revoke", "reader").code == 0
        assert server.post("/api/v1/access/reload", token=boss).doc["revoked"] == 1
        (repo / "grants" / "broken.yaml").write_text("grants:\n  - subjects: 3\n")
        broken_here = cli(repo, "access", "reload")
        assert broken_here.code == 1 and "grants/broken.yaml" in broken_here.error["error"]
        broken_far = server.post("/api/v1/access/reload", token=boss)
        # the server's configuration is broken, not the request: 503, naming the file
        assert broken_far.status == 503 and broken_far.error == broken_here.error
        assert broken_far.error["code"] == "access_broken"
        refused = server.get("/api/v1/models", token=boss)
        assert refused.status == 503 and "grants/broken.yaml" in refused.error["error"]
    finally:
        server.stop()
    audit = (repo / ".swamp" / "cache" / "serve" / "audit.jsonl").read_text()
    assert '"op": "reloadAccess"' in audit and boss.split(".", 1)[1] not in audit
