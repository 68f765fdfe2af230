"""`swamp auth server-login|logout|whoami` against a real server: a token
checked with the server and kept per URL (mode 0600), so `--server URL`
needs no `--token`; a refused token is never kept; a login is never taken
for the local user's full-access token of a server on that address."""

from __future__ import annotations

import os
import stat
import textwrap

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve, mint_token

GRANTS = """
grants:
  - subjects: ["token:ci"]
    actions: [read]
    resources: ["model:*"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("login") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    token = mint_token(repo, "ci")
    server = Serve(repo, "--auth-mode", "token")
    yield server, token
    server.stop()


def user_env(tmp_path) -> dict:
    """A user of the CLI, with a config folder of their own."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


def test_server_login_keeps_the_token_so_server_needs_no_token(served, tmp_path):
    server, token = served
    env = user_env(tmp_path)
    before = cli(None, "model", "get", "hello", "--server", server.url, env=env, cwd=tmp_path)
    assert before.code == 2 or before.code == 1
    login = cli(None, "auth", "server-login", server.url, "--token", token, env=env, cwd=tmp_path)
    assert login.code == 0, login
    assert login.data["verified"] and login.data["actor"] == "token:ci"
    path = tmp_path / "config" / "swamp" / "serve" / "127.0.0.1-{}.login".format(server.port)
    assert login.data["file"] == str(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700

    listed = cli(None, "data", "list", "--server", server.url, env=env, cwd=tmp_path)
    assert listed.code == 0, listed
    who = cli(None, "auth", "whoami", "--server", server.url, env=env, cwd=tmp_path)
    assert who.code == 0 and who.data["actor"] == "token:ci" and who.data["tokenFrom"] == "login"
    assert token.split(".", 1)[1] not in who.stdout  # the secret is never printed back

    out = cli(None, "auth", "logout", server.url, env=env, cwd=tmp_path)
    assert out.code == 0 and out.data["loggedOut"] and not path.exists()
    after = cli(None, "data", "list", "--server", server.url, env=env, cwd=tmp_path)
    assert after.code == 1 and after.error["code"] == "unauthorized"
    again = cli(None, "auth", "logout", server.url, env=env, cwd=tmp_path)
    assert again.code == 0 and again.data["loggedOut"] is False


def test_a_refused_token_is_not_kept(served, tmp_path):
    server, token = served
    env = user_env(tmp_path)
    wrong = token.split(".", 1)[0] + ".not-the-secret"
    login = cli(None, "auth", "server-login", server.url, "--token", wrong, env=env, cwd=tmp_path)
    assert login.code == 1 and login.error["code"] == "unauthorized"
    assert not (tmp_path / "config" / "swamp" / "serve").exists() or not any(
        (tmp_path / "config" / "swamp" / "serve").iterdir())
    assert server.get("/api/v1/whoami").status == 401  # nobody: no identity to tell


def test_server_login_reads_a_piped_token(served, tmp_path):
    server, token = served
    env = user_env(tmp_path)
    login = cli(None, "auth", "server-login", "--server", server.url, input=token + "\n", env=env, cwd=tmp_path)
    assert login.code == 0 and login.data["actor"] == "token:ci"
    assert token not in login.stdout + login.stderr


def test_a_login_is_never_a_servers_local_token(tmp_path):
    """A minted token kept by server-login for an address must not become
    the full-access local token of a `swamp serve` started on it later."""
    from swamp.app import logins

    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    logins.save_login("http://127.0.0.1:9555", "ci.SECRET", env)
    made, path = logins.ensure("127.0.0.1", 9555, env)
    assert made != "ci.SECRET" and made.startswith(logins.PREFIX) and path.suffix == ".token"
    assert logins.for_url("http://localhost:9555", env) == "ci.SECRET"  # the login goes first


def test_auth_commands_say_what_is_missing(tmp_path):
    env = user_env(tmp_path)
    none = cli(None, "auth", "server-login", "--token", "a.b", env=env, cwd=tmp_path)
    assert none.code == 2 and "which server" in none.error["error"]
    bad = cli(None, "auth", "server-login", "ftp://x", "--token", "a.b", "--no-verify", env=env, cwd=tmp_path)
    assert bad.code == 2 and "http" in bad.error["error"]
    here = cli(None, "auth", "whoami", env=env, cwd=tmp_path)
    assert here.code == 0 and here.data["local"].startswith("user:") and here.data["server"] is None
