"""Workflow signals (docs/signals.md) between peers on SeaweedFS: a wait
takes exactly one outcome, whoever races for it (two senders, or a sender
and the timeout); a message that breaks the step's schema is refused and
the run still waits."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo, ok, peer_from_git, popen, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]

DEPLOY = """\
name: deploy
jobs:
  - name: main
    steps:
      - name: release
        task:
          type: wait_for_signal
          prompt: which version?
          schema:
            type: object
            required: [version]
            properties:
              version: {type: string}
      - name: ship
        dependsOn: [{step: release}]
        task:
          type: model_method
          modelIdOrName: hello
          methodName: execute
          inputs: {run: "echo shipping ${{ steps.release.signal.version }}"}
"""

RACE = """\
name: race
jobs:
  - name: main
    steps:
      - name: go
        task: {type: wait_for_signal, timeout: 3}
"""


def _peers(tmp_path: Path, seaweedfs, workflow: str) -> tuple[Path, Path]:
    setup = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    (a / "workflows").mkdir(exist_ok=True)
    name = workflow.splitlines()[0].split(": ")[1]
    (a / "workflows" / f"workflow-{name}.yaml").write_text(workflow)
    ok(a, "datastore", "setup", *setup)
    b = peer_from_git(a, tmp_path / "b")
    shutil.copytree(a / "workflows", b / "workflows", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *setup)
    return a, b


def _step(run: dict, name: str) -> dict:
    return next(s for j in run["jobs"] for s in j["steps"] if s["name"] == name)


def test_two_peers_signal_one_wait_at_once_one_wins(tmp_path, seaweedfs):
    a, b = _peers(tmp_path, seaweedfs, DEPLOY)
    run = ok(a, "workflow", "run", "deploy")
    assert run["status"] == "suspended"
    assert _step(run, "release")["status"] == "waiting_signal"
    waits = ok(b, "workflow", "signals")
    assert [(w["runId"], w["step"], w["state"]) for w in waits] == [(run["id"], "release", "waiting")]

    senders = {
        "alice": popen(a, "workflow", "signal", "deploy", "release", "--data", '{"version": "1.0-alice"}',
                       env={"USER": "alice"}),
        "bob": popen(b, "workflow", "signal", "deploy", "release", "--data", '{"version": "2.0-bob"}',
                     env={"USER": "bob"}),
    }
    done = {who: (p.wait(120), *p.communicate()) for who, p in senders.items()}
    winners = [who for who, (code, _, _) in done.items() if code == 0]
    assert len(winners) == 1, done
    winner = winners[0]
    loser = "bob" if winner == "alice" else "alice"
    code, _, err = done[loser]
    assert code == 1
    error = json.loads(err)
    assert error["code"] == "conflict"
    assert "already settled" in error["error"] and f"signalled by user:{winner}@" in error["error"], error
    assert json.loads(done[winner][1])["by"].startswith(f"user:{winner}@")

    # Either peer continues the run: once, with the winner's message.
    resumed = ok(b, "workflow", "resume", "deploy")
    assert resumed["status"] == "succeeded", resumed
    release = _step(resumed, "release")
    version = "1.0-alice" if winner == "alice" else "2.0-bob"
    assert release["signal"]["outcome"] == "signalled"
    assert release["signal"]["message"] == {"version": version}
    _step(resumed, "ship")  # raises if the resumed run has no step "ship"
    data = ok(a, "data", "get", "hello", "result")
    assert f"shipping {version}" in json.dumps(data["content"])
    again = cli(a, "workflow", "resume", "deploy")
    assert again.code == 1 and "no suspended run" in again.stderr
    assert ok(a, "workflow", "signals") == []


def test_a_malformed_message_is_refused_and_the_run_still_waits(tmp_path, seaweedfs):
    a, b = _peers(tmp_path, seaweedfs, DEPLOY)
    run = ok(a, "workflow", "run", "deploy")
    before = ok(b, "datastore", "log")
    bad = cli(b, "workflow", "signal", "deploy", "release", "--data", '{"version": 3}')
    assert bad.code == 1
    error = json.loads(bad.stderr)
    assert error["code"] == "validation"
    assert "does not match its schema" in error["error"] and "version: expected string" in error["error"]
    assert "nothing was recorded" in error["hint"]
    not_json = cli(b, "workflow", "signal", "deploy", "release", "--data", "{version: 3")
    assert not_json.code == 2 and "not JSON" in json.loads(not_json.stderr)["error"]
    assert ok(b, "datastore", "log") == before  # nothing published
    waits = ok(a, "workflow", "signals", "deploy")
    assert [(w["runId"], w["state"]) for w in waits] == [(run["id"], "waiting")]
    still = cli(a, "workflow", "resume", "deploy")  # continues, and suspends again: nothing settled it
    assert json.loads(still.stdout)["status"] == "suspended"
    good = ok(b, "workflow", "signal", "deploy", "release", "--data", '{"version": "3.0"}')
    assert good["outcome"] == "signalled" and good["runId"] == run["id"]
    assert ok(a, "workflow", "resume", "deploy")["status"] == "succeeded"


def test_a_signal_racing_its_timeout_gets_exactly_one_outcome(tmp_path, seaweedfs):
    a, b = _peers(tmp_path, seaweedfs, RACE)
    run = ok(a, "workflow", "run", "race")
    deadline = json.loads(json.dumps(ok(b, "workflow", "signals")))[0]["deadline"]
    assert deadline
    from swamp.util import clock

    left = clock.parse_iso(deadline).timestamp() - time.time()
    time.sleep(max(0.0, left - 0.3))  # fire both right around the deadline
    # --run: under load the sender may start after the run has ended, when no run
    # of 'race' waits any more; named, it is told the one outcome either way
    sender = popen(b, "workflow", "signal", "race", "go", "--data", '{"ok": true}', "--run", run["id"],
                   env={"USER": "bob"})
    resumer = popen(a, "workflow", "resume", "race", env={"USER": "alice"})
    s_code, _, s_err = sender.wait(120), *sender.communicate()
    _, r_out, _ = resumer.wait(120), *resumer.communicate()
    resumed = json.loads(r_out)
    if resumed["status"] == "suspended":  # the resume came first, before the deadline: resume once more
        resumed = ok(a, "workflow", "resume", "race")
    go = _step(resumed, "go")
    if s_code == 0:
        assert go["signal"]["outcome"] == "signalled" and go["signal"]["message"] == {"ok": True}
        assert go["status"] == "succeeded" and resumed["status"] == "succeeded"
    else:
        assert "already settled: timed out" in json.loads(s_err)["error"], s_err
        assert go["signal"]["outcome"] == "timed_out"
        assert go["status"] == "failed" and go["error"] == "no signal within 3 s"
    # Whatever happened, a later sender is told the same one outcome.
    late = cli(b, "workflow", "signal", "race", "go", "--data", "{}", "--run", run["id"])
    assert late.code == 1
    words = "timed out" if go["signal"]["outcome"] == "timed_out" else "signalled by user:bob@"
    assert f"already settled: {words}" in json.loads(late.stderr)["error"], late.stderr
