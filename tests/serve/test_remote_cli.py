"""The command line with --server (or SWAMP_SERVE_URL) and --token: the
same output and exit codes as the same command run locally."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import cli, init_repo, write_type
from tests.serve.server import Serve

TYPED = '''
    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        times: int = 1
        loud: bool = False


    typed = ModelType("test/typed", version="2026.01.01.1", description="typed inputs")
    typed.resource("out", lifetime="infinite")


    @typed.method(description="echo typed inputs", arguments=Args)
    def echo(args, ctx: Context) -> None:
        ctx.write_resource("out", "out", {"times": args.times, "loud": args.loud})
'''

FAILING = """
name: failing
jobs:
  - name: main
    steps:
      - name: boom
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "exit 4"}}
"""

VOLATILE = {"id", "startedAt", "completedAt", "durationMs", "logFile", "dataArtifacts", "outputId",
            "createdAt", "updatedAt",
            "initiatedBy"}  # who: the local user here, the server's caller there (asserted below)


def stable(doc):
    if isinstance(doc, dict):
        return {k: stable(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [stable(v) for v in doc]
    return doc


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("remote") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_type(repo, "typed.py", TYPED)
    assert cli(repo, "model", "create", "test/typed", "typed").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-failing.yaml").write_text(textwrap.dedent(FAILING).lstrip())
    server = Serve(repo)
    yield server
    server.stop()


def both(served, *args, json=True, **kw):
    """The command run locally and through the server (from another directory, no repository there)."""
    local = cli(served.repo, *args, json=json, **kw)
    remote = cli(None, *args, "--server", served.url, json=json, cwd=served.repo.parent, **kw)
    return local, remote


def test_method_run_same_record_and_exit_codes(served):
    local, remote = both(served, "model", "method", "run", "hello", "execute", "--input", "run=echo same")
    assert local.code == remote.code == 0
    assert stable(local.data) == stable(remote.data)
    # run here it is the local user's; through the server, its caller's (no credential: anonymous)
    assert local.data["initiatedBy"].startswith("user:")
    assert remote.data["initiatedBy"] == "anonymous" or remote.data["initiatedBy"].startswith("token:")
    local, remote = both(served, "model", "method", "run", "hello", "execute", "--input", "run=exit 3")
    assert local.code == remote.code == 1
    assert local.data["status"] == remote.data["status"] == "failed"
    # typed inputs from --input KEY=VALUE are coerced the same way
    local, remote = both(served, "model", "method", "run", "typed", "echo", "--input", "times=3",
                         "--input", "loud=yes")
    assert local.code == remote.code == 0
    got = cli(served.repo, "data", "get", "typed", "out").data["content"]
    assert got == {"times": 3, "loud": True}
    local, remote = both(served, "model", "method", "run", "typed", "echo", "--input", "times=many")
    assert local.code == remote.code == 1 and local.error == remote.error


def test_data_get_and_list_are_identical(served):
    cli(served.repo, "model", "method", "run", "hello", "execute", "--input", "run=echo x")
    for args in (("data", "get", "hello", "result"), ("data", "list"), ("data", "list", "hello"),
                 ("data", "get", "hello", "result", "--version", "1", "--no-content")):
        local, remote = both(served, *args)
        assert local.code == remote.code == 0 and local.stdout == remote.stdout, args
        local, remote = both(served, *args, json=False)
        assert local.code == remote.code == 0 and local.stdout == remote.stdout, args
    local, remote = both(served, "data", "get", "hello", "nothing")
    assert local.code == remote.code == 1 and local.error == remote.error


def test_workflow_run_same_status_and_exit_code(served):
    local, remote = both(served, "workflow", "run", "failing")
    assert local.code == remote.code == 1
    assert stable(local.data) == stable(remote.data)
    local, remote = both(served, "workflow", "run", "nope")
    assert local.code == remote.code == 1 and local.error["code"] == remote.error["code"] == "not_found"


def test_env_url_and_token(served, tmp_path):
    env = {"SWAMP_SERVE_URL": served.url}
    r = cli(None, "data", "list", env=env, cwd=tmp_path)
    assert r.code == 0 and r.data == cli(served.repo, "data", "list").data
    # a command that runs only locally ignores the variable, but refuses --server
    assert cli(served.repo, "model", "search", env=env).code == 0
    refused = cli(served.repo, "model", "search", "--server", served.url)
    assert refused.code == 2 and refused.error["code"] == "usage"
    unreachable = cli(None, "data", "list", "--server", "http://127.0.0.1:9", cwd=tmp_path)
    assert unreachable.code == 1 and unreachable.error["code"] == "unreachable"


def test_token_errors_have_the_cli_exit_codes(tmp_path):
    repo = init_repo(tmp_path / "repo")
    token = cli(repo, "access", "token", "mint", "ci").data["token"]
    server = Serve(repo, "--auth-mode", "token")
    try:
        no = cli(None, "data", "list", "--server", server.url, cwd=tmp_path)
        assert no.code == 1 and no.error["code"] == "unauthorized"
        denied = cli(None, "data", "get", "x", "y", "--server", server.url, "--token", token, cwd=tmp_path)
        assert denied.code == 1 and denied.error["code"] == "forbidden"
        listed = cli(None, "data", "list", env={"SWAMP_SERVE_URL": server.url, "SWAMP_SERVE_TOKEN": token},
                     cwd=tmp_path)
        assert listed.code == 0 and listed.data == []
    finally:
        server.stop()


def test_a_batch_from_stdin_with_input_overrides(served):
    ndjson = '{"loud": true}\n{"loud": false}\n'
    local, remote = both(served, "model", "method", "run", "typed", "echo", "--stdin", "--input", "times=2",
                         input=ndjson)
    assert local.code == remote.code == 0
    assert [r["status"] for r in remote.data] == ["succeeded", "succeeded"]
    assert stable(local.data) == stable(remote.data)
    assert cli(served.repo, "data", "get", "typed", "out").data["content"] == {"times": 2, "loud": False}


def test_approve_and_cancel_through_the_server(served, tmp_path):
    gated = """
    name: gated
    jobs:
      - name: main
        steps:
          - name: gate
            task: {type: manual_approval, prompt: "go?"}
          - name: after
            dependsOn: [{step: gate}]
            task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo after"}}
    """
    (served.repo / "workflows" / "workflow-gated.yaml").write_text(textwrap.dedent(gated).lstrip())
    remote = lambda *a: cli(None, *a, "--server", served.url, cwd=tmp_path)  # noqa: E731
    first = remote("workflow", "run", "gated")
    assert first.code == 0 and first.data["status"] == "suspended"
    approved = remote("workflow", "approve", "gated", "gate", "--reason", "ok")
    assert approved.code == 0 and approved.data["decision"] == "approved"
    second = remote("workflow", "run", "gated")
    cancelled = remote("workflow", "cancel", "gated", "--run", second.data["id"])
    assert cancelled.code == 0 and cancelled.data["status"] == "cancelled"
    missing = remote("workflow", "reject", "gated", "nope")
    local = cli(served.repo, "workflow", "reject", "gated", "nope")
    assert missing.code == local.code == 1 and missing.error["code"] == local.error["code"]
