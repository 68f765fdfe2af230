"""The dashboard's pages over plain HTTP (no browser): no vault secret on
any page, in a download or in the live stream, even from a method that
prints it; values escaped; the security headers; the API's grants."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve
from tests.helpers import write_shell, write_workflow

SECRET = "tok-5be1d2-Dashboard-Secret"

LEAKY = """
type: command/shell
name: leaky
globalArguments:
  run: 'echo "the token is $TOKEN"'
  env:
    TOKEN: "${{ vault.get('main', 'token') }}"
"""

USE = """
jobs:
  - name: main
    steps:
      - name: leak
        task: {type: model_method, modelIdOrName: leaky, methodName: execute}
      - name: "<b>gate</b>"
        dependsOn: [{step: leak}]
        task: {type: manual_approval, prompt: "<script>alert(1)</script> ok?"}
"""


def fetch(server: Serve, path: str) -> tuple[int, str, dict]:
    try:
        with urllib.request.urlopen(server.url + path, timeout=30) as r:
            if r.headers.get("Content-Type", "").startswith("text/event-stream"):
                lines = []  # up to the log's first frame: the run waits, the stream goes on
                for line in r:
                    lines.append(line.decode())
                    if lines[-1].startswith("data: ") and len(lines) > 1 and lines[-2] == "event: log\n":
                        break
                return r.status, "".join(lines), dict(r.headers)
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("pages") / "repo")
    write_shell(repo, "leaky", LEAKY)
    write_workflow(repo, "use", USE)
    assert cli(repo, "vault", "create", "local_encryption", "main").code == 0
    assert cli(repo, "vault", "put", "main", "token", input=SECRET).code == 0
    server = Serve(repo, "--dashboard")
    run = server.post("/api/v1/workflows/use/run", {})  # the secret is resolved in the server's process
    assert run.status == 200 and run.doc["status"] == "suspended", run.doc
    yield server, run.doc["id"]
    server.stop()


def test_no_secret_reaches_any_page(served):
    server, run_id = served
    pages = ["/ui/workflows", "/ui/workflows/use", f"/ui/workflows/use/runs/{run_id}", "/ui/approvals",
             "/ui/models", "/ui/data/leaky/result", "/ui/data/leaky/result/1", "/ui/data/leaky/result/1?download=1",
             "/ui/data/leaky/log/1", "/ui/datastore", "/ui/audit", f"/ui/workflows/use/runs/{run_id}/events"]
    for path in pages:
        status, text, _ = fetch(server, path)
        assert status == 200, (path, status, text[:300])
        assert SECRET not in text, path
    _, content, _ = fetch(server, "/ui/data/leaky/result/1")
    assert "the token is" in content  # the output is there, its secret is not


def test_pages_escape_what_they_show_and_forbid_inline_scripts(served):
    server, run_id = served
    status, text, headers = fetch(server, f"/ui/workflows/use/runs/{run_id}")
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>gate</b>" not in text and "&lt;b&gt;gate&lt;/b&gt;" in text
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert headers["x-content-type-options"] == "nosniff"


def test_bad_names_and_unknown_runs_are_pages_not_tracebacks(served):
    server, _ = served
    status, text, _ = fetch(server, "/ui/workflows/use/runs/not-a-run")
    assert status == 404 and "Traceback" not in text and "no run" in text
    status, text, _ = fetch(server, "/ui/workflows/nope")
    assert status == 404 and "Traceback" not in text
    status, text, _ = fetch(server, "/ui/workflows/use?page=x")
    assert status == 400 and "page must be a number" in text
