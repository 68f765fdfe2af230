"""`swamp serve --cert-file/--key-file` take a relative path as relative
to the repository (issue 26 form 8), as every repository path is: a
server started elsewhere with --repo-dir finds its certificate, and a
wrong path is an error naming the path it looked at."""

from __future__ import annotations

from tests.helpers import cli, init_repo
from tests.serve.server import Serve
from tests.serve.test_api import _self_signed


def test_relative_certificate_paths_are_in_the_repository(tmp_path):
    repo = init_repo(tmp_path / "repo")
    (repo / "tls").mkdir()
    cert, _ = _self_signed(repo / "tls")
    server = Serve(repo, "--cert-file", "tls/cert.pem", "--key-file", "tls/key.pem", ca_file=cert)  # cwd elsewhere
    try:
        assert server.url.startswith("https://") and server.get("/health").doc["status"] == "ok"
    finally:
        server.stop()


def test_a_relative_path_missing_from_the_repository_names_where_it_looked(tmp_path):
    repo = init_repo(tmp_path / "repo")
    _self_signed(tmp_path)  # beside the repository, where the command starts: not where it looks
    r = cli(repo, "serve", "--cert-file", "cert.pem", "--key-file", "key.pem", cwd=tmp_path)
    assert r.code == 1 and str(repo / "cert.pem") in r.error["error"] and "does not exist" in r.error["error"]
    assert "relative to the repository" in r.error["hint"]
