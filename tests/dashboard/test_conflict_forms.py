"""Conflict copies resolved from the datastore page, on a shared datastore
(SeaweedFS, started by the fixtures): Restore puts ours in place and
publishes it, Drop deletes only our copy; both need `write` on `data:*`
(a reader sees no buttons and a forged form is refused), and both need the
page's CSRF token. Over plain HTTP: no browser needed."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.dashboard.http import Session, text_of
from tests.helpers import init_repo, ok, s3_setup_args
from tests.serve.server import Serve, mint_token

pytestmark = pytest.mark.s3

DOC = "config/shared.json"
GRANTS = """
grants:
  - subjects: ["token:admin"]
    actions: [read, write]
    resources: ["data:*"]
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["data:*"]
"""



@pytest.fixture
def served(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "datastore", "setup", *s3_setup_args(seaweedfs))
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {name: mint_token(repo, name) for name in ("admin", "reader")}
    ds = repo / ".swamp"
    (ds / "config").mkdir(parents=True, exist_ok=True)
    (ds / DOC).write_text('{"tier": "gold"}')
    (ds / f"{DOC}.conflict-laptop-ab12-7").write_text('{"tier": "silver"}')
    (ds / f"{DOC}.conflict-desk-9").write_text('{"tier": "bronze"}')
    server = Serve(repo, "--auth-mode", "token", "--dashboard")
    yield repo, server, tokens
    server.stop()


def test_restore_and_drop_from_the_page(served):
    repo, server, tokens = served
    admin = Session(server)
    admin.login(tokens["admin"])
    status, page = admin.get("/ui/datastore")
    assert status == 200
    assert page.count('action="/ui/datastore/conflicts/restore"') == 2
    assert page.count('action="/ui/datastore/conflicts/drop"') == 2

    status, page = admin.post("/ui/datastore/conflicts/restore", {"copy": f"{DOC}.conflict-laptop-ab12-7"},
                              csrf_from="/ui/datastore")
    assert status == 200, text_of(page)[:500]
    assert f"Restored {DOC}.conflict-laptop-ab12-7" in text_of(page)
    assert json.loads((repo / ".swamp" / DOC).read_text()) == {"tier": "silver"}
    assert "restore" in ok(repo, "datastore", "log", "--limit", "1")[0]["command"]  # published

    status, page = admin.post("/ui/datastore/conflicts/drop", {"copy": f"{DOC}.conflict-desk-9"},
                              csrf_from="/ui/datastore")
    assert status == 200 and f"Dropped {DOC}.conflict-desk-9" in text_of(page)
    assert json.loads((repo / ".swamp" / DOC).read_text()) == {"tier": "silver"}
    assert not (repo / ".swamp" / f"{DOC}.conflict-desk-9").exists()
    assert "no sync has kept a copy aside" in text_of(admin.get("/ui/datastore")[1])

    status, page = admin.post("/ui/datastore/conflicts/drop", {"copy": f"{DOC}.conflict-desk-9"},
                              csrf_from="/ui/datastore")
    assert status == 404 and "no conflict copy named" in text_of(page) and "Traceback" not in page


def test_a_reader_has_no_buttons_and_is_refused(served):
    repo, server, tokens = served
    reader = Session(server)
    reader.login(tokens["reader"])
    status, page = reader.get("/ui/datastore")
    assert status == 200 and "conflict-laptop-ab12-7" in page
    assert "/ui/datastore/conflicts/" not in page and "needs write" in text_of(page)
    status, page = reader.post("/ui/datastore/conflicts/drop", {"copy": f"{DOC}.conflict-desk-9"},
                               csrf_from="/ui/datastore")
    assert status == 403 and "write" in text_of(page)
    assert (repo / ".swamp" / f"{DOC}.conflict-desk-9").exists()


def test_a_form_without_the_page_token_is_refused(served):
    repo, server, tokens = served
    admin = Session(server)
    admin.login(tokens["admin"])
    status, page = admin.post("/ui/datastore/conflicts/drop", {"copy": f"{DOC}.conflict-desk-9", "csrf": "0" * 64})
    assert status == 403 and "CSRF" in text_of(page)
    assert (repo / ".swamp" / f"{DOC}.conflict-desk-9").exists()
