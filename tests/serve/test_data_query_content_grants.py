"""Over `swamp serve`, a `data query` predicate over content tests only the
data the caller may read: a caller granted `read data:eu/*` learns nothing of
`apac`'s content, not even through `limit` (the rows it cannot read are not
looked at, so they cannot use up the limit)."""

from __future__ import annotations

import textwrap

from tests.helpers import WORK_TYPE, init_repo, ok, write_model, write_type
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GRANTS = """
grants:
  - subjects: ["token:eu-reader"]
    actions: [read]
    resources: ["data:eu/*"]
"""


def test_a_content_predicate_never_sees_data_the_caller_cannot_read(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_type(repo, "work.py", WORK_TYPE)
    for m in ("apac", "eu"):
        write_model(repo, m, f"globalArguments:\n  value: {m}\n")
        ok(repo, "model", "method", "run", m, "work")
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    token = mint_token(repo, "eu-reader")
    server = Serve(repo, "--auth-mode", "token")
    try:
        def query(predicate, limit=100):
            r = server.post(f"{API}/data/query", {"predicate": predicate, "limit": limit}, token=token)
            assert r.status == 200, r
            return [row["model"] for row in r.doc]

        assert query('attributes.value == "eu"') == ["eu"]
        assert query('attributes.value == "apac"') == []  # apac exists, but this caller cannot read it
        assert query("attributes.value != ''", limit=1) == ["eu"]  # apac (sorted first) does not take the one place
    finally:
        server.stop()
