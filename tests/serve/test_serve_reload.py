"""`swamp serve reload --server URL`: a running server takes up grants,
tokens and trusted indexes changed since it started, while requests keep
being answered (none dropped, none refused meanwhile); a token without
admin on serve:reload is refused (403) and reloads nothing."""

from __future__ import annotations

import textwrap
import threading

from tests.helpers import cli, init_repo, ok
from tests.serve.server import Serve, mint_token

GRANTS = """
grants:
  - subjects: ["token:boss"]
    actions: [admin]
    resources: ["serve:reload", "model:*"]
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["*"]
"""


def test_serve_reload_takes_up_changes_without_dropping_requests(tmp_path):
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    boss, reader = mint_token(repo, "boss"), mint_token(repo, "reader")
    server = Serve(repo, "--auth-mode", "token")
    try:
        refused = cli(None, "serve", "reload", "--server", server.url, "--token", reader, cwd=tmp_path)
        assert refused.code == 1 and refused.error["code"] == "forbidden"
        assert cli(None, "serve", "reload", "--server", server.url, cwd=tmp_path).error["code"] == "unauthorized"

        statuses: list[int] = []
        stop = threading.Event()

        def keep_asking():
            while not stop.is_set():
                statuses.append(server.get("/api/v1/models/hello", token=boss).status)

        asker = threading.Thread(target=keep_asking)
        asker.start()
        try:
            late = mint_token(repo, "late")
            ok(repo, "access", "grant", "create", "--subject", "token:late", "--allow", "read", "--on", "model:*")
            ok(repo, "extension", "trust", "add", "http://127.0.0.1:1/simple/")
            done = cli(None, "serve", "reload", "--server", server.url, "--token", boss, cwd=tmp_path)
            assert done.code == 0, done
            assert done.data["access"]["tokens"] == 3 and done.data["trustedIndexes"] == ["http://127.0.0.1:1/simple/"]
            assert server.get("/api/v1/models/hello", token=late).status == 200
        finally:
            stop.set()
            asker.join()
        assert statuses and set(statuses) == {200}  # every request during the reload answered
        text = cli(None, "serve", "reload", "--server", server.url, "--token", boss, json=False, cwd=tmp_path)
        assert text.code == 0 and "3 token(s)" in text.stdout
    finally:
        server.stop()
    audit = (repo / ".swamp" / "cache" / "serve" / "audit.jsonl").read_text()
    assert '"op": "reloadServe"' in audit and boss.split(".", 1)[1] not in audit


def test_serve_reload_without_a_server_says_what_to_give(tmp_path):
    repo = init_repo(tmp_path / "repo")
    r = cli(repo, "serve", "reload")
    assert r.code == 2 and "--server" in r.error["error"]
