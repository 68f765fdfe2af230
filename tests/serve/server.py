"""Running `swamp serve` as a real process for tests, and a tiny HTTP
client (urllib: no client library needed)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.fixtures.servers import _spawn, free_port, stop_processes, wait_until
from tests.helpers import PYTHON, _env


@dataclass
class Reply:
    status: int
    doc: object
    headers: dict

    @property
    def error(self) -> dict:
        assert isinstance(self.doc, dict) and {"error", "code"} <= set(self.doc), self.doc
        return self.doc


class Serve:
    """A `swamp serve` process. Unless a test passes its own --auth-mode it
    runs with --auth-mode none (what every test did before the default
    became token); ``default_auth=True`` starts it as a user would, with
    the local user's token (``local_token``). Its user config
    (XDG_CONFIG_HOME, where that token is kept) is a folder beside the
    repository, never the real one."""

    def __init__(self, repo: Path, *args: str, env: dict | None = None, ca_file: Path | None = None,
                 default_auth: bool = False) -> None:
        self.repo = repo
        self.config_home = repo.parent / f"{repo.name}-xdg-config"
        env = {"XDG_CONFIG_HOME": str(self.config_home), **(env or {})}
        if "--auth-mode" not in args and not default_auth:
            args = (*args, "--auth-mode", "none")
        self.port = free_port()
        self.context = None
        if ca_file is not None:  # HTTPS: trust this certificate
            import ssl

            self.context = ssl.create_default_context(cafile=str(ca_file))
        self.url = f"{'https' if ca_file else 'http'}://127.0.0.1:{self.port}"
        self.log = repo / f"serve-{self.port}.log"
        argv = [PYTHON, "-m", "swamp", "serve", "--port", str(self.port), "--repo-dir", str(repo), *args]
        self.proc = _spawn(argv, self.log, env=_env(env))
        wait_until("swamp serve", lambda: self.get("/health").status == 200, [self.proc], self.log, 30)

    @property
    def local_token(self) -> str:
        """The local user's token this server made (default auth only)."""
        from swamp.app.logins import token_path

        return token_path("127.0.0.1", self.port, {"XDG_CONFIG_HOME": str(self.config_home)}).read_text().strip()

    def request(self, method: str, path: str, body=None, *, token: str | None = None, raw: bytes | None = None,
                headers: dict | None = None, timeout: float = 60) -> Reply:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.context) as r:
                return Reply(r.status, json.loads(r.read() or b"null"), dict(r.headers))
        except urllib.error.HTTPError as e:
            text = e.read()
            return Reply(e.code, json.loads(text) if text else None, dict(e.headers))

    def get(self, path: str, **kw) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, body=None, **kw) -> Reply:
        return self.request("POST", path, body if body is not None else {}, **kw)

    def run_method(self, model: str, method: str, inputs: dict | None = None, **kw) -> Reply:
        return self.post(f"/api/v1/models/{model}/methods/{method}/run", {"inputs": inputs or {}}, **kw)

    def events(self, path: str, body: dict, *, token: str | None = None):
        """The server-sent events of a streaming request, as (event, data) as they arrive."""
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Accept": "text/event-stream", "Content-Type": "application/json"})
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(req, timeout=60) as r:
            assert r.headers["Content-Type"].startswith("text/event-stream")
            event = None
            for line in r:
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[len("event: "):]
                elif line.startswith("data: "):
                    yield event, json.loads(line[len("data: "):])

    def stop(self, timeout: float = 30) -> int:
        stop_processes([self.proc], timeout_s=timeout)
        return self.proc.returncode


def serve_cli(repo: Path, *args, env: dict | None = None, timeout: float = 60):
    """`swamp ARGS --json` in a subprocess (helpers.cli, with an environment)."""
    from tests.helpers import cli

    return cli(repo, *args, env=env, timeout=timeout)


__all__ = ["Serve", "Reply", "serve_cli", "subprocess"]


def mint_token(repo: Path, name: str, *args: str) -> str:
    """`swamp access token mint NAME ARGS`: the token, shown once."""
    from tests.helpers import cli

    r = cli(repo, "access", "token", "mint", name, *args)
    assert r.code == 0, r
    return r.data["token"]
