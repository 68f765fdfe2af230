"""The dashboard's Extensions page over plain HTTP: the pins, what waits for
approval and the history a team reviews; it needs `read model:*`; what
peers recorded (their user names) is shown as text."""

from __future__ import annotations

import textwrap

import pytest

from tests.dashboard.http import Session, text_of
from tests.extensions.test_extension_history import as_user
from tests.extensions.wheels import make_wheel
from tests.helpers import ok, init_repo
from tests.serve.server import Serve, mint_token

GRANTS = """
grants:
  - subjects: ["token:reviewer"]
    actions: [read]
    resources: ["model:*"]
  - subjects: ["token:outsider"]
    actions: [read]
    resources: ["workflow:*"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory, pypi):
    repo = init_repo(tmp_path_factory.mktemp("ext-page") / "repo")
    make_wheel(pypi.packages, "page-ext", "1.0", types=("page-ext/t",))
    ok(repo, "extension", "pull", "page-ext", "--index", pypi.url, env=as_user("alice"))
    ok(repo, "config", "set", "extensions.requireApproval", "true")
    make_wheel(pypi.packages, "page-ext", "2.0", types=("page-ext/t",))
    ok(repo, "extension", "update", env=as_user("<b>mallory</b>"))
    (repo / "grants").mkdir(exist_ok=True)
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {n: mint_token(repo, n) for n in ("reviewer", "outsider")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield server, tokens
    server.stop()


def test_the_page_shows_pins_proposals_and_history_newest_first(served):
    server, tokens = served
    s = Session(server)
    s.login(tokens["reviewer"])
    status, page = s.get("/ui/extensions")
    assert status == 200, page[:500]
    text = text_of(page)
    assert f"page-ext 1.0 {server_index(page)}" in text  # pinned: the approved version, from its index
    assert "Waiting for approval" in text and "extensions.requireApproval is set" in text
    # newest first: the proposal, then alice's pin
    assert text.index("propose") < text.index("alice@")
    assert "<b>mallory</b>" not in page and "&lt;b&gt;mallory&lt;/b&gt;" in page  # recorded names are text


def server_index(page: str) -> str:
    import re

    return re.search(r"http://127\.0\.0\.1:\d+/simple/", page).group(0)


def test_without_read_on_models_the_page_is_refused(served):
    server, tokens = served
    s = Session(server)
    s.login(tokens["outsider"])
    status, page = s.get("/ui/extensions")
    assert status == 403, page[:300]
    assert "page-ext" not in page
