"""In headless Chromium, a page on another origin (a tiny http.server on
another port, as in p2) tries what a web page can do to a `swamp serve` on
loopback: a ``no-cors`` fetch posting a method run as ``text/plain`` (no
preflight), a form posting the same, a form posting the dashboard's run
form, and a read of the API. Against the default server (a credential
needed) and one with an explicit ``--auth-mode none``, nothing runs
(no marker file) and nothing is read; each attempt reached the server and
was refused at its front door (the audit log says so). A name rebound to
127.0.0.1 (DNS rebinding, done here with Chromium's resolver rules) gets
nothing either: the server does not answer for that Host."""

from __future__ import annotations

import functools
import http.server
import json
import threading

import pytest

from tests.helpers import cli, init_repo, write_workflow
from tests.serve.server import Serve
from tests.serve.test_front_door import audit_codes

TOUCH = """
jobs:
  - name: main
    steps:
      - name: touch
        task: {type: model_method, modelIdOrName: toucher, methodName: execute}
"""


def attacker_pages(folder, target: str, marker) -> None:
    run = f"{target}/api/v1/models/nosuchmodel/methods/execute/run"
    attack = json.dumps({"type": "command/shell", "inputs": {"run": f"touch {marker}"}})
    (folder / "fetch.html").write_text(f"""<!doctype html><title>cats</title><script>
fetch({json.dumps(run)}, {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
  body: {json.dumps(attack)}}}).then(() => document.title = "sent", e => document.title = "error " + e);
</script>""")
    # a text/plain form sends 'name=value': the name carries the JSON, the value closes it
    name, value = attack[:-1] + ', "x": "', '"}'
    (folder / "form.html").write_text(f"""<!doctype html><title>cats</title>
<form method="post" enctype="text/plain" action={json.dumps(run)}>
<input type="hidden" name='{name}' value='{value}'></form>
<script>document.forms[0].submit()</script>""")
    (folder / "dashboard-form.html").write_text(f"""<!doctype html><title>cats</title>
<form method="post" action="{target}/ui/workflows/touch/run"></form>
<script>document.forms[0].submit()</script>""")
    (folder / "read.html").write_text(f"""<!doctype html><title>cats</title><script>
fetch("{target}/api/v1/models").then(r => r.text()).then(t => document.title = "read " + t,
  e => document.title = "blocked");
</script>""")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The attacker's web site: http://localhost:PORT/, pages written per test."""
    folder = tmp_path_factory.mktemp("attacker-site")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield folder, f"http://localhost:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module", params=["default", "none"])
def served(request, tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp(f"cross-origin-{request.param}") / "repo")
    marker = repo.parent / "pwned"
    assert cli(repo, "model", "create", "command/shell", "toucher", "--global-arg", f"run=touch {marker}").code == 0
    write_workflow(repo, "touch", TOUCH)
    if request.param == "default":
        server = Serve(repo, "--dashboard", default_auth=True)
    else:
        server = Serve(repo, "--dashboard", "--auth-mode", "none")
    yield server, marker, server.local_token if request.param == "default" else None
    server.stop()


def _open(browsers, url: str, until_title: bool = True, extra_args: tuple[str, ...] = ()):
    page = browsers.context(extra_args).new_page()
    page.goto(url)
    if until_title:
        page.wait_for_function("document.title !== 'cats'", timeout=20_000)
    else:
        page.wait_for_load_state("load")
    return page


def test_a_page_on_another_origin_runs_nothing(served, site, browsers):
    server, marker, token = served
    folder, origin = site
    attacker_pages(folder, server.url, marker)
    before = audit_codes(server.repo).count("origin_refused")

    page = _open(browsers, f"{origin}/fetch.html")
    assert page.title() == "sent"  # the browser did send it (no-cors: the page cannot see the answer)
    page = _open(browsers, f"{origin}/form.html", until_title=False)
    page.wait_for_url(f"{server.url}/**")
    assert "origin_refused" in page.content()
    page = _open(browsers, f"{origin}/dashboard-form.html", until_title=False)
    page.wait_for_url(f"{server.url}/**")

    assert audit_codes(server.repo).count("origin_refused") - before == 3  # each one arrived, and was refused
    assert not marker.exists()
    assert server.get("/api/v1/workflows/touch/runs", token=token).doc == []


def test_a_page_on_another_origin_reads_nothing(served, site, browsers):
    server, marker, _ = served
    folder, origin = site
    attacker_pages(folder, server.url, marker)
    page = _open(browsers, f"{origin}/read.html")
    assert page.title() == "blocked"  # no CORS header: the answer never reaches the page


def test_a_name_rebound_to_loopback_gets_nothing(served, browsers):
    server, _, _ = served
    page = browsers.context(("--host-resolver-rules=MAP rebound.test 127.0.0.1",)).new_page()
    response = page.goto(f"http://rebound.test:{server.port}/api/v1/models")
    assert response.status == 403
    assert "host_refused" in page.content() and "toucher" not in page.content()
    response = page.goto(f"http://rebound.test:{server.port}/ui/workflows")
    assert response.status == 403 and "touch" not in page.content().replace("host_refused", "")

