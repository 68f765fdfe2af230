"""`swamp workflow history get NAME --server URL` (issue 26, form 1): a
workflow's name means its newest run there too, as it does locally. Who
may: whoever may read that workflow; to a token that may not, the name is
only a run id (404), so it cannot tell whether such a workflow exists."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import cli, init_repo, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"

GRANTS = """
grants:
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["workflow:hello-twice", "model:*", "data:*"]
  - subjects: ["token:other"]
    actions: [read]
    resources: ["workflow:elsewhere"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("by-name") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "hello-twice", """
        jobs:
          - name: main
            steps:
              - {name: hi, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
    """)
    runs = [cli(repo, "workflow", "run", "hello-twice").data["id"] for _ in range(2)]
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {name: mint_token(repo, name) for name in ("reader", "other")}
    server = Serve(repo, "--auth-mode", "token")
    yield server, tokens, runs
    server.stop()


def test_history_get_by_workflow_name_on_a_server_is_its_newest_run(served):
    server, tokens, runs = served
    local = cli(server.repo, "workflow", "history", "get", "hello-twice")
    assert local.code == 0 and local.data["id"] == runs[-1]
    remote = cli(server.repo, "workflow", "history", "get", "hello-twice", "--server", server.url,
                 "--token", tokens["reader"])
    assert remote.code == 0, remote
    assert remote.data["id"] == runs[-1] and remote.data["workflowName"] == "hello-twice"
    by_id = cli(server.repo, "workflow", "history", "get", runs[0], "--server", server.url, "--token", tokens["reader"])
    assert by_id.code == 0 and by_id.data["id"] == runs[0]  # an id still means that run


def test_a_caller_who_may_not_read_the_workflow_learns_nothing_from_its_name(served):
    server, tokens, _ = served
    by_name = server.get(f"{API}/runs/hello-twice", token=tokens["other"])
    missing = server.get(f"{API}/runs/no-such-workflow", token=tokens["other"])
    assert by_name.status == missing.status == 404
    assert by_name.error["code"] == missing.error["code"] == "not_found"
