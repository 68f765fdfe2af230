"""A placed step's log with a multi-line vault secret (issue 23, item 5;
the worker half of p9): a worker runs the step with the secret the
dispatcher sent, and neither the lines it streams back to the run (which
land in the run's log, in the shared datastore, and in serve's events)
nor the step's stored output record and `log` data hold a line of it.

Tested at the function a worker calls (app/remote_steps.run_step, in this
process, with a StepControl collecting what the worker would send over
Dask), so that it does not depend on a live cluster; this process has not
read the secret before the step, as a worker has not."""

from __future__ import annotations

import pytest

from swamp.app import remote_steps
from swamp.models.definitions import find_definition
from swamp.repo.context import Repo
from swamp.vault import redact
from swamp.workers.steps import StepControl, running
from swamp.workflows.placement import StepJob
from tests.helpers import cli, init_repo, ok, write_shell

PEM = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
       "q3Jx2cWq0Zl7kGZK9hS1dPp0YvQ4Z2ZxXn0b5yVqZ8mL4bB1wDd2\n-----END PRIVATE KEY-----")
KEY_LINES = PEM.splitlines()[1:3]


@pytest.fixture
def repo(tmp_path):
    redact.clear()
    r = init_repo(tmp_path / "repo")
    ok(r, "vault", "create", "local_encryption", "prod")
    ok(r, "vault", "put", "prod", "tls.key", input=PEM + "\n")
    write_shell(r, "show", """
        type: command/shell
        name: show
        globalArguments:
          run: 'echo "$KEY"; printf "%s" "$KEY" >&2'
          env:
            KEY: "${{ vault.get('prod', 'tls.key') }}"
    """)
    yield r
    redact.clear()


def test_a_placed_steps_streamed_and_stored_log_hold_no_line_of_a_multi_line_secret(repo):
    streamed: list[str] = []
    control = StepControl("step-key", topic="run-topic", step="say",
                          emit=lambda topic, message: streamed.append(message["line"]))
    definition = find_definition(Repo.open(repo), "show")[1]
    job = StepJob(definition=definition, method="execute", inputs={}, command="workflow run p9",
                               secrets={("prod", "tls.key"): PEM}, step_name="say")
    with running(control):
        outcome = remote_steps.run_step(Repo.open(repo), job, worker="w1", control=control)
    assert outcome.status == "succeeded", outcome
    assert streamed.count("***") >= 4 and "exit code 0" in streamed[-1], streamed  # the lines did stream
    stored = cli(repo, "data", "get", "show", "log").data["content"]
    for line in KEY_LINES:
        assert not any(line in s for s in streamed), streamed
        assert line not in stored
    for dirpath in (repo / ".swamp",):
        for path in dirpath.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert not any(line.encode() in data for line in KEY_LINES), path


def test_a_placed_steps_lines_in_the_dispatching_runs_log_hold_no_line_of_the_secret(repo, monkeypatch):
    """The whole path, in this process: the dispatcher sends the step, the
    "worker" (run_step in a thread) streams its lines back through its
    StepControl, and they land in the run's log, which the shared datastore
    keeps."""
    import threading

    from tests.helpers import invoke, write_workflow

    class HereDispatcher:
        def close(self):
            pass

        def run(self, job, placement, cancelled=None, on_log=None, **_):
            control = StepControl(None, topic="t", step=job.step_name or "",
                                  emit=lambda topic, message: on_log(message["line"]))
            out = []

            def work():
                with running(control):
                    out.append(remote_steps.run_step(Repo.open(repo), job, worker="here", control=control))

            t = threading.Thread(target=work)
            t.start()
            t.join()
            return out[0]

    from swamp.app import placed_steps

    # the dispatcher app makes for --scheduler: this one, in this process
    monkeypatch.setattr(placed_steps, "dask_dispatcher", lambda scheduler, link=None: HereDispatcher())
    write_workflow(repo, "placed", """
        jobs:
          - name: j
            steps:
              - name: say
                placement: {labels: {region: eu}}
                task: {type: model_method, modelIdOrName: show, methodName: execute}
    """)
    r = invoke(repo, "workflow", "run", "placed", "--scheduler", "tls://here:8786")
    assert r.code == 0, r
    log = invoke(repo, "workflow", "logs", "placed").data["log"]
    assert "step j/say: | ***" in log, log  # the worker's lines reached the run's log, masked
    for line in KEY_LINES:
        assert line not in log and line not in r.stdout + r.stderr
