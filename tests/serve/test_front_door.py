"""serve's front door, over plain HTTP against real servers: a foreign
``Host`` (DNS rebinding) is refused before anything runs or is read, a
state-changing request from another site's ``Origin`` is refused, the JSON
API takes only ``application/json``; and the default server needs a
credential on loopback too: the local user's token, kept 0600 in the
user's config, used by ``--server`` and by the dashboard's login link."""

from __future__ import annotations

import http.client
import json
import os
import stat

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve

RUN = "/api/v1/models/nosuchmodel/methods/execute/run"


def attack_body(marker) -> bytes:
    """What p2's page posts: a shell type run directly, no model needed."""
    return json.dumps({"type": "command/shell", "inputs": {"run": f"touch {marker}"}}).encode()


def raw(server: Serve, method: str, path: str, body: bytes | None = None, **headers) -> tuple[int, dict, dict]:
    """One request with exactly these headers (``Host`` too), as a browser or
    an attacker's script would send it."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        headers.setdefault("Host", f"127.0.0.1:{server.port}")
        if body is not None:
            headers["Content-Length"] = str(len(body))
        for k, v in headers.items():
            conn.putheader(k.replace("_", "-"), v)
        conn.endheaders(body)
        r = conn.getresponse()
        text = r.read()
        return r.status, (json.loads(text) if text and r.getheader("content-type", "").startswith(
            "application/json") else {}), dict(r.getheaders())
    finally:
        conn.close()


def audit_codes(repo) -> list[str]:
    path = repo / ".swamp" / "cache" / "serve" / "audit.jsonl"
    return [json.loads(line).get("code") for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    root = tmp_path_factory.mktemp("front-door")
    repo = init_repo(root / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    default = Serve(repo, "--dashboard", "--allow-host", "swamp.internal", "--allow-origin",
                    "http://ops.example:8443", default_auth=True)
    open_repo = init_repo(root / "open")
    assert cli(open_repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    none = Serve(open_repo, "--auth-mode", "none")
    yield default, none, root
    default.stop()
    none.stop()


# ------------------------------------------------------------------ Host
def test_a_foreign_host_is_refused_before_anything_runs_or_is_read(servers):
    default, none, root = servers
    marker = root / "rebound"
    for server, token in ((default, default.local_token), (none, None)):
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        status, doc, _ = raw(server, "GET", "/api/v1/models", Host="attacker.example", **auth)
        assert (status, doc["code"]) == (403, "host_refused"), doc
        assert "hello" not in json.dumps(doc)
        status, doc, _ = raw(server, "POST", RUN, attack_body(marker), Host=f"attacker.example:{server.port}",
                             Origin="http://attacker.example", Content_Type="text/plain", **auth)
        assert (status, doc["code"]) == (403, "host_refused")
        assert set(doc) == {"error", "code", "hint"}
        assert "host_refused" in audit_codes(server.repo)
    assert not marker.exists()


def test_the_loopback_names_and_allowed_hosts_are_answered(servers):
    default, _, _ = servers
    port = default.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "swamp.internal",
                 f"swamp.internal:{port}", "SWAMP.internal:1234"):
        status, doc, _ = raw(default, "GET", "/health", Host=host)
        assert status == 200, (host, doc)
    for host in (f"localhost:{port + 1}", "localhost.attacker.example", f"127.0.0.1.nip.io:{port}", ""):
        assert raw(default, "GET", "/health", Host=host)[0] == 403, host


# ---------------------------------------------------------------- Origin
@pytest.mark.parametrize("origin", ["http://localhost:9", "http://attacker.example", "null"])
def test_a_state_changing_request_from_another_origin_is_refused(servers, origin):
    default, none, root = servers
    marker = root / "cross-origin"
    for server, auth in ((none, {}), (default, {"Authorization": f"Bearer {default.local_token}"})):
        status, doc, _ = raw(server, "POST", RUN, attack_body(marker), Origin=origin,
                             Content_Type="application/json", **auth)
        assert (status, doc["code"]) == (403, "origin_refused"), doc
        assert "origin_refused" in audit_codes(server.repo)
    assert not marker.exists()


def test_the_servers_own_origin_and_allowed_origins_may_post(servers):
    default, none, _ = servers
    body = json.dumps({"inputs": {"run": "echo same-origin"}}).encode()
    status, doc, _ = raw(none, "POST", "/api/v1/models/hello/methods/execute/run", body,
                         Origin=f"http://127.0.0.1:{none.port}", Content_Type="application/json")
    assert (status, doc["status"]) == (200, "succeeded"), doc
    auth = {"Authorization": f"Bearer {default.local_token}"}
    status, doc, _ = raw(default, "POST", "/api/v1/models/hello/methods/execute/run", body,
                         Origin="http://ops.example:8443", Content_Type="application/json", **auth)
    assert (status, doc["status"]) == (200, "succeeded"), doc
    # a read carries no Origin check (the browser's same-origin policy keeps its answer from the page)
    assert raw(none, "GET", "/api/v1/models", Origin="http://attacker.example")[0] == 200


# ---------------------------------------------------------- content type
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None])
def test_the_api_takes_only_json_bodies(servers, content_type):
    _, none, root = servers
    marker = root / "simple-request"
    headers = {"Content_Type": content_type} if content_type else {}
    status, doc, _ = raw(none, "POST", RUN, attack_body(marker), **headers)
    assert (status, doc["code"]) == (415, "unsupported_media_type"), doc
    assert "application/json" in doc["hint"]
    assert not marker.exists()


# ---------------------------------------------------- the local credential
def test_the_default_server_needs_a_credential_on_loopback(servers):
    default, _, root = servers
    assert default.get("/health").doc["authMode"] == "token"
    marker = root / "no-credential"
    status, doc, _ = raw(default, "POST", RUN, attack_body(marker), Content_Type="application/json")
    assert (status, doc["code"]) == (401, "unauthorized")
    assert raw(default, "GET", "/api/v1/models")[0] == 401
    assert not marker.exists()


def test_the_local_token_is_private_and_gives_the_local_user_full_access(servers):
    default, _, _ = servers
    path = default.config_home / "swamp" / "serve" / f"127.0.0.1-{default.port}.token"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    reply = default.run_method("hello", "execute", {"run": "echo with-local-token"}, token=default.local_token)
    assert (reply.status, reply.doc["status"]) == (200, "succeeded"), reply
    log = default.log.read_text()
    assert str(path) in log  # the server says where it is


def test_the_cli_picks_up_the_local_token_for_that_server_only(servers):
    default, none, _ = servers
    env = {"XDG_CONFIG_HOME": str(default.config_home)}
    r = cli(default.repo, "model", "method", "run", "hello", "execute", "--input", "run=echo via-cli",
            "--server", default.url, env=env)
    assert r.code == 0 and r.data["status"] == "succeeded", r
    # without the config that holds it, the same command is refused: the token is the credential
    r = cli(default.repo, "model", "method", "run", "hello", "execute", "--server", default.url,
            env={"XDG_CONFIG_HOME": str(default.config_home.parent / "elsewhere")})
    assert r.code != 0 and json.loads(r.stderr)["code"] == "unauthorized", r


def test_the_login_link_becomes_a_session_cookie_and_leaves_the_address(servers):
    default, _, _ = servers
    status, _, headers = raw(default, "GET", f"/ui/login?token={default.local_token}")
    assert status == 303 and headers["location"] == "/ui/"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    session = cookie.split(";", 1)[0]
    status, _, _ = raw(default, "GET", "/ui/workflows", Cookie=session)
    assert status == 200
    status, _, headers = raw(default, "GET", "/ui/login?token=local.not-the-token")
    assert status == 401 and "set-cookie" not in headers
    # a link on another site would log the browser in as that token's owner (login CSRF)
    status, _, headers = raw(default, "GET", f"/ui/login?token={default.local_token}", Sec_Fetch_Site="cross-site")
    assert status == 403 and "set-cookie" not in headers
    assert f"/ui/login?token={default.local_token}" in default.log.read_text()
