"""A placed step's failed command keeps its last lines of stderr as a field
of its own (``stderrTail``) when it ran on a Dask worker: the step record,
the run's ``failureStderrTail`` and `workflow history get` on the
dispatching peer carry it as a local step's would, and a vault secret the
command printed on stderr is masked there too."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import assert_secrets_nowhere, cli
from tests.workers.conftest import SECRET

pytestmark = [pytest.mark.slow, pytest.mark.s3]

MODELS = {
    "grumbler": """
        type: command/shell
        name: grumbler
        globalArguments:
          run: 'echo out; echo "first" >&2; echo "the disk is full" >&2; exit 3'
    """,
    "leaky": """
        type: command/shell
        name: leaky
        globalArguments:
          run: 'echo "token was $TOKEN" >&2; exit 1'
          env:
            TOKEN: "${{ vault.get('main', 'token') }}"
    """,
}

WORKFLOWS = {
    "grumble": """
        name: grumble
        jobs:
          - name: j
            steps:
              - name: fail
                placement: {target: us-1, queueTimeout: 20}
                task: {type: model_method, modelIdOrName: grumbler, methodName: execute}
    """,
    "leak": """
        name: leak
        jobs:
          - name: j
            steps:
              - name: leak
                placement: {target: us-1, queueTimeout: 20}
                task: {type: model_method, modelIdOrName: leaky, methodName: execute}
    """,
}


@pytest.fixture(scope="module")
def tails(cluster):
    for name, body in MODELS.items():
        (cluster.origin / "models" / "command" / "shell" / f"{name}.yaml").write_text(textwrap.dedent(body).lstrip())
    for name, body in WORKFLOWS.items():
        (cluster.origin / "workflows" / f"workflow-{name}.yaml").write_text(textwrap.dedent(body).lstrip())
    return cluster


def _step(doc: dict, name: str) -> dict:
    return next(s for j in doc["jobs"] for s in j["steps"] if s["name"] == name)


def test_a_placed_steps_stderr_tail_comes_back_from_its_worker(tails):
    r = cli(tails.origin, "workflow", "run", "grumble", *tails.link, timeout=120)
    assert r.code == 1, r
    step = _step(r.data, "fail")
    assert step["worker"] == "us-1"  # it ran there, not on the dispatching peer
    assert (step["error"], step["stderrTail"]) == ("command exited with code 3", "first | the disk is full")
    assert (r.data["failureReason"], r.data["failureStderrTail"]) == (step["error"], step["stderrTail"])
    got = cli(tails.origin, "workflow", "history", "get", "grumble")
    assert _step(got.data, "fail")["stderrTail"] == "first | the disk is full"


def test_a_secret_a_placed_command_prints_on_stderr_is_masked_in_its_tail(tails):
    r = cli(tails.origin, "workflow", "run", "leak", *tails.link, timeout=120)
    assert r.code == 1, r
    assert _step(r.data, "leak")["stderrTail"] == "token was ***"
    shown = cli(tails.origin, "workflow", "history", "get", "leak", json=False)
    assert "stderr of j/leak: token was ***" in shown.stdout
    assert_secrets_nowhere(tails.origin, (SECRET,), r, shown)
