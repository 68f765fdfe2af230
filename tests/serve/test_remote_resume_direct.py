"""--server for `workflow resume` (after an approval, and --from a step),
a type run directly (`model method run TYPE METHOD NAME`) and `data get
--workflow`: the same output and exit codes as locally."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve
from tests.serve.test_remote_cli import FAILING, stable

GATE = """
name: gate
jobs:
  - name: main
    steps:
      - name: ok
        task: {type: manual_approval, prompt: "go?"}
      - name: say
        dependsOn: [{step: ok}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo gated"}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("remote2") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-failing.yaml").write_text(textwrap.dedent(FAILING).lstrip())
    (repo / "workflows" / "workflow-gate.yaml").write_text(textwrap.dedent(GATE).lstrip())
    server = Serve(repo)
    yield server
    server.stop()


def remote(served, *args, json=True):
    return cli(None, *args, "--server", served.url, json=json, cwd=served.repo.parent)


def test_resume_after_an_approval_and_from_a_step(served):
    repo = served.repo
    results = {}
    for where in ("local", "remote"):
        assert cli(repo, "workflow", "run", "gate").data["status"] == "suspended"
        assert cli(repo, "workflow", "approve", "gate", "ok", "--no-resume").code == 0  # resumed below
        r = cli(repo, "workflow", "resume", "gate") if where == "local" else remote(served, "workflow", "resume", "gate")
        assert r.code == 0, r
        results[where] = r.data
    assert results["local"]["status"] == results["remote"]["status"] == "succeeded"
    def steps(d):
        return [(s["name"], s["status"]) for j in d["jobs"] for s in j["steps"]]

    assert steps(results["local"]) == steps(results["remote"]) == [("ok", "succeeded"), ("say", "succeeded")]
    # the same document, but for who continued it: through the server, its caller (started here: the local user)
    assert "resumedBy" not in results["local"] and not results["remote"]["resumedBy"].startswith("user:")
    assert sorted(results["local"]) == sorted(set(results["remote"]) - {"resumedBy"})
    text = remote(served, "workflow", "history", "gate", json=False)
    assert text.code == 0 and text.stdout.count("succeeded") == 2

    assert cli(repo, "workflow", "run", "failing").code == 1
    local = cli(repo, "workflow", "resume", "failing", "--from", "boom")
    far = remote(served, "workflow", "resume", "failing", "--from", "boom")
    assert local.code == far.code == 1 and local.data["status"] == far.data["status"] == "failed"
    bad_local = cli(repo, "workflow", "resume", "failing", "--from", "nope")
    bad_far = remote(served, "workflow", "resume", "failing", "--from", "nope")
    assert bad_local.code == bad_far.code == 1 and bad_local.error == bad_far.error
    junit = remote(served, "workflow", "resume", "gate", "--junit", "out.xml")
    assert junit.code == 2 and junit.error["code"] == "usage"


def test_a_type_run_directly_and_data_get_workflow(served):
    repo = served.repo
    args = ("model", "method", "run", "command/shell", "execute", "greet", "--input", "run=echo direct")
    local, far = cli(repo, *args), remote(served, *args)
    assert local.code == far.code == 0
    assert stable(local.data) == stable(far.data)
    assert cli(repo, "data", "get", "greet", "result").data["version"] == 2  # both ran, one after the other
    for bad in (("model", "method", "run", "command/shell", "execute"),
                ("model", "method", "run", "hello", "execute", "extra")):
        lb, rb = cli(repo, *bad), remote(served, *bad)
        assert lb.code == rb.code == 2 and lb.error == rb.error, bad

    assert cli(repo, "workflow", "run", "gate").code == 0
    approved = cli(repo, "workflow", "approve", "gate", "ok")  # the run continues here, to its end
    assert approved.code == 0 and approved.data["run"]["status"] == "succeeded", approved
    run_id = approved.data["runId"]
    cli(repo, "model", "method", "run", "hello", "execute", "--input", "run=echo later")  # a newer version
    for which in ("gate", run_id[:8]):
        for json_mode in (True, False):
            lg = cli(repo, "data", "get", "hello", "result", "--workflow", which, json=json_mode)
            rg = remote(served, "data", "get", "hello", "result", "--workflow", which, json=json_mode)
            assert lg.code == rg.code == 0 and lg.stdout == rg.stdout, which
    got = remote(served, "data", "get", "hello", "result", "--workflow", run_id).data
    assert got["content"]["stdout"] == "gated"
