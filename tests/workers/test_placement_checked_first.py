"""Placement checked first (issue #25): a workflow whose placed steps
cannot be dispatched is refused before any of its steps runs, on the CLI
and on a server; `--queue-timeout` bounds a placed step's wait for a
worker, with a line of progress while it waits; the worker that ran a step
is in `workflow history get` (its table and --json) and in the API."""

from __future__ import annotations

import textwrap
import threading

import pytest

from tests.helpers import cli, init_repo, invoke, write_shell, write_workflow
from tests.serve.server import Serve, mint_token
from tests.workers.cluster import start_scheduler, stop_processes, team

API = "/api/v1"

# A local step first, then a placed one: refused, the local one must not have run either.
PIPE = """
    jobs:
      - name: j
        steps:
          - {name: local, task: {type: model_method, modelIdOrName: first, methodName: execute}}
          - name: away
            dependsOn: [{step: local}]
            placement: {labels: {region: mars}, queueTimeout: 30}
            task: {type: model_method, modelIdOrName: first, methodName: execute}
"""

GRANTS = """
grants:
  - subjects: ["token:reader", "token:runner"]
    actions: [read]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:runner"]
    actions: [run]
    resources: ["workflow:*", "model:*"]
"""


def _repo(path):
    repo = init_repo(path)
    # an absolute path: a server's steps run in its own working directory
    write_shell(repo, "first", f"type: command/shell\nname: first\nglobalArguments: {{run: 'echo ran >> {repo}/ran'}}\n")
    write_workflow(repo, "pipe", PIPE)
    return repo


def _ran(repo) -> int:
    p = repo / "ran"
    return len(p.read_text().splitlines()) if p.exists() else 0


def test_a_run_whose_placed_steps_cannot_be_dispatched_is_refused_before_any_step_runs(tmp_path):
    repo = _repo(tmp_path / "r")
    r = cli(repo, "workflow", "run", "pipe")
    assert r.code == 1 and not r.stdout.strip(), r
    assert r.error["code"] == "no_scheduler" and "j/away" in r.error["error"], r
    assert "--scheduler" in r.error["hint"]
    assert _ran(repo) == 0  # the local step before it did not run
    assert cli(repo, "workflow", "history", "list", "pipe").data == []  # no run was recorded


def test_a_detached_run_whose_placed_steps_cannot_be_dispatched_is_refused_at_once(tmp_path):
    repo = _repo(tmp_path / "r")
    r = cli(repo, "workflow", "run", "pipe", "--detach")
    assert r.code == 1 and r.error["code"] == "no_scheduler" and "j/away" in r.error["error"], r
    assert _ran(repo) == 0
    assert cli(repo, "workflow", "history", "list", "pipe").data == []


def test_a_remote_only_run_without_a_scheduler_is_refused(tmp_path):
    repo = _repo(tmp_path / "r")
    write_workflow(repo, "plain", "jobs:\n  - name: j\n    steps:\n"
                                  "      - {name: s, task: {type: model_method, modelIdOrName: first, methodName: execute}}\n")
    r = cli(repo, "workflow", "run", "plain", "--remote-only")
    assert r.code == 1 and r.error["code"] == "no_scheduler" and "j/s" in r.error["error"], r
    assert _ran(repo) == 0


def test_a_bad_queue_timeout_is_a_usage_error(tmp_path):
    repo = _repo(tmp_path / "r")
    r = cli(repo, "workflow", "run", "pipe", "--queue-timeout", "0")
    assert r.code == 2 and r.error["code"] == "usage" and "--queue-timeout" in r.error["error"], r
    assert _ran(repo) == 0


class _HereDispatcher:
    """A dispatcher that runs the job as a worker would (app/remote_steps.run_step,
    in a thread of its own), on the dispatching repository, as worker "here"."""

    def __init__(self, repo) -> None:
        self.repo = repo

    def run(self, job, placement, **_):
        from swamp.app import remote_steps
        from swamp.repo.context import Repo

        out = []
        t = threading.Thread(target=lambda: out.append(remote_steps.run_step(Repo.open(self.repo), job,
                                                                                worker="here")))
        t.start()
        t.join()
        return out[0]

    def close(self) -> None:
        pass


def _placed_run(repo, monkeypatch, *args) -> str:
    """A run of ``pipe`` whose placed step ran on worker "here"; its id."""
    from swamp.app import placed_steps

    monkeypatch.setattr(placed_steps, "dask_dispatcher", lambda scheduler, link=None: _HereDispatcher(repo))
    r = invoke(repo, "workflow", "run", "pipe", "--scheduler", "tls://here:8786", *args)
    assert r.code == 0, r
    return r.data["id"]


def test_the_worker_that_ran_a_step_is_in_history_get(tmp_path, monkeypatch):
    repo = _repo(tmp_path / "r")
    run_id = _placed_run(repo, monkeypatch)
    doc = invoke(repo, "workflow", "history", "get", run_id).data
    workers = {s["name"]: s.get("worker") for j in doc["jobs"] for s in j["steps"]}
    assert workers == {"local": None, "away": "here"}
    table = invoke(repo, "workflow", "history", "get", run_id, json=False).stdout
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["JOB", "STEP"])
    column = lines[header].index("WORKER")
    away = next(line for line in lines[header + 1:] if line.split()[1:2] == ["away"])
    assert away[column:].split()[0] == "here", table


def test_a_suspended_run_with_placed_steps_left_is_not_resumed_without_a_scheduler(tmp_path, monkeypatch):
    repo = _repo(tmp_path / "r")
    write_workflow(repo, "gated", """
        jobs:
          - name: j
            steps:
              - {name: gate, task: {type: manual_approval, prompt: go}}
              - name: away
                dependsOn: [{step: gate}]
                placement: {labels: {region: mars}}
                task: {type: model_method, modelIdOrName: first, methodName: execute}
    """)
    from swamp.app import placed_steps

    monkeypatch.setattr(placed_steps, "dask_dispatcher", lambda scheduler, link=None: _HereDispatcher(repo))
    r = invoke(repo, "workflow", "run", "gated", "--scheduler", "tls://here:8786")
    assert r.code == 0 and r.data["status"] == "suspended", r
    run_id = r.data["id"]
    r = invoke(repo, "workflow", "resume", "gated", "--run", run_id)
    assert r.code == 1 and r.error["code"] == "no_scheduler" and "j/away" in r.error["error"], r
    assert invoke(repo, "workflow", "history", "get", run_id).data["status"] == "suspended"  # left as it was
    assert _ran(repo) == 0


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server with no scheduler, on a repository holding one run whose
    placed step ran on worker "here" (recorded before it started)."""
    repo = _repo(tmp_path_factory.mktemp("placed-serve") / "repo")
    with pytest.MonkeyPatch.context() as mp:
        run_id = _placed_run(repo, mp)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {name: mint_token(repo, name) for name in ("reader", "runner")}
    server = Serve(repo, "--auth-mode", "token")
    yield server, tokens, repo, run_id
    server.stop()


def test_a_server_without_a_scheduler_refuses_a_placed_run_before_it_starts(served):
    server, tokens, repo, _ = served
    before = _ran(repo)
    r = server.post(f"{API}/workflows/pipe/run", {}, token=tokens["runner"])
    assert r.status == 503 and r.error["code"] == "no_scheduler" and "j/away" in r.error["error"], r
    r = server.post(f"{API}/workflows/pipe/run", {"wait": False}, token=tokens["runner"])  # nor in the background
    assert r.status == 503 and r.error["code"] == "no_scheduler", r
    assert _ran(repo) == before  # nothing ran
    # a caller who may not run it is refused as before, learning nothing of its placement
    r = server.post(f"{API}/workflows/pipe/run", {}, token=tokens["reader"])
    assert r.status == 403 and "scheduler" not in r.error["error"], r


def test_the_api_says_which_worker_ran_a_step(served):
    server, tokens, _, run_id = served
    doc = server.get(f"{API}/workflows/pipe/runs/{run_id}", token=tokens["reader"]).doc
    workers = {s["name"]: s.get("worker") for j in doc["jobs"] for s in j["steps"]}
    assert workers == {"local": None, "away": "here"}


@pytest.mark.slow
def test_queue_timeout_bounds_the_wait_for_a_worker_with_a_line_of_progress(tmp_path):
    """A real scheduler with no worker at all: the step's own queueTimeout
    (30 s) is cut to --queue-timeout's 1 s, and a progress line says why
    nothing moves while it waits."""
    repo = _repo(tmp_path / "r")
    certs = team(tmp_path / "certs")
    address, procs, _ = start_scheduler(tmp_path, certs)
    try:
        r = cli(repo, "workflow", "run", "pipe", "--scheduler", address, "--team-certs", str(certs),
                "--queue-timeout", "1", json=False, timeout=120)
    finally:
        stop_processes(procs)
    assert r.code == 1, r
    run = cli(repo, "workflow", "history", "get", "pipe").data  # (its newest run)
    steps = {s["name"]: s for j in run["jobs"] for s in j["steps"]}
    assert steps["local"]["status"] == "succeeded"
    assert steps["away"]["status"] == "failed"
    assert "no worker with region=mars connected within 1 s" in steps["away"]["error"], steps["away"]
    assert "waiting up to 1 s for a worker with region=mars" in r.stderr, r.stderr
    log = cli(repo, "workflow", "logs", "pipe").data["log"]
    assert "j/away: waiting up to 1 s for a worker with region=mars" in log
