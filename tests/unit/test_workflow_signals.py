"""The wait_for_signal step on a directory datastore (docs/signals.md):
what `workflow validate` refuses, a message read by later steps, the
timeout's two endings, a restarted wait waiting afresh, and the listing."""

from __future__ import annotations

import json
import time

from tests.helpers import init_repo, invoke, resume, run, statuses, steps, write_workflow

WAIT = """\
jobs:
  - name: main
    steps:
      - name: release
        task:
          type: wait_for_signal
          prompt: which version?
          schema: {type: object, required: [version], properties: {version: {type: string}}}
      - name: check
        dependsOn: [{step: release}]
        task:
          type: assert
          expr: '${{ steps.release.signal.version == "1.4.2" && steps.release.outcome == "signalled" }}'
          message: "got ${{ steps.release.signal.version }}"
"""


def _repo(tmp_path, name="deploy", body=WAIT):
    repo = init_repo(tmp_path / "r")
    write_workflow(repo, name, body)
    return repo


def _signal(repo, *args):
    return invoke(repo, "workflow", "signal", *args)


def test_validate_checks_each_wait_and_every_steps_reference(tmp_path):
    repo = _repo(tmp_path, "bad", """\
jobs:
  - name: main
    steps:
      - name: gate
        task: {type: wait_for_signal, schema: {type: objekt}, timeout: 5, onTimeout: continue, default: 3}
      - name: use
        task: {type: assert, expr: '${{ steps.gaet.signal.x == 1 }}', message: m}
""")
    r = invoke(repo, "workflow", "validate", "bad")
    assert r.code == 1
    errors = r.data["workflows"][0]["errors"]
    assert "jobs[0].steps[0].task.schema.type: 'objekt' is not a JSON type" in " ".join(errors)
    assert any("task.default: the message a timeout gives is a map" in e for e in errors)
    assert any("steps.gaet names no wait_for_signal step (did you mean 'gate'?)" in e for e in errors)
    write_workflow(repo, "bad", """\
jobs:
  - name: main
    steps:
      - name: gate
        task: {type: wait_for_signal, onTimeout: continue, default: {}}
""")
    r = invoke(repo, "workflow", "validate", "bad")
    assert r.code == 1 and "onTimeout and default need a timeout" in r.stdout + r.stderr
    write_workflow(repo, "bad", """\
jobs:
  - name: main
    steps:
      - name: gate
        task:
          type: wait_for_signal
          schema: {type: object, required: [v]}
          timeout: 5
          onTimeout: continue
          default: {w: 1}
""")
    r = invoke(repo, "workflow", "validate", "bad")
    assert r.code == 1
    assert "task.default: " in json.dumps(r.data) and "needs 'v'" in json.dumps(r.data)


def test_a_message_is_read_by_later_steps_and_taken_once(tmp_path):
    repo = _repo(tmp_path)
    first = run(repo, "deploy")
    assert first.status == "suspended" and statuses(first)["main/release"] == "waiting_signal"
    from swamp.repo.context import Repo
    from swamp.app.workflow_files import run_json

    required = run_json(Repo.open(repo), first)["signalRequired"]
    assert [(w["job"], w["step"], w["prompt"], w["deadline"]) for w in required] == \
        [("main", "release", "which version?", None)]
    listed = invoke(repo, "workflow", "signals").data
    assert [(w["step"], w["state"], w["prompt"]) for w in listed] == [("release", "waiting", "which version?")]

    bad = _signal(repo, "deploy", "release", "--data", '["1.4.2"]')
    assert bad.code == 1 and "must be a JSON object, not a list" in bad.stderr
    (tmp_path / "m.json").write_text('{"version": "1.4.2"}')
    good = _signal(repo, "deploy", "main/release", "--data", f"@{tmp_path / 'm.json'}")
    assert good.code == 0 and good.data["outcome"] == "signalled" and good.data["runId"] == first.id
    again = _signal(repo, "deploy", "release", "--data", '{"version": "9"}', "--run", first.id)
    assert again.code == 1 and "already settled: signalled by" in again.stderr

    done = resume(repo, "deploy")
    assert done.status == "succeeded", statuses(done)
    w = steps(done)["main/release"].signal
    assert w.outcome == "signalled" and w.message == {"version": "1.4.2"}
    late = _signal(repo, "deploy", "release", "--data", '{"version": "9"}', "--run", first.id)
    assert late.code == 1 and "already settled: signalled by" in late.stderr
    assert invoke(repo, "workflow", "signals").data == []


def test_an_expired_wait_fails_or_continues_with_its_default(tmp_path):
    from swamp.util import clock

    repo = _repo(tmp_path, "tmo", """\
jobs:
  - name: main
    steps:
      - name: soft
        task: {type: wait_for_signal, timeout: 60, onTimeout: continue, default: {v: none}}
      - name: hard
        task: {type: wait_for_signal, timeout: 60}
      - name: after
        dependsOn: [{step: soft}]
        task: {type: assert, expr: '${{ steps.soft.signal.v == "none" }}', message: "no default"}
""")
    first = run(repo, "tmo")
    assert first.status == "suspended"
    clock.set_clock(lambda: time.time() + 120)  # two minutes later
    try:
        assert {w["step"]: w["state"] for w in invoke(repo, "workflow", "signals").data} == \
            {"soft": "timed out", "hard": "timed out"}
        late = _signal(repo, "tmo", "hard", "--data", "{}")
        assert late.code == 1 and "already settled: timed out" in late.stderr
        done = resume(repo, "tmo")
    finally:
        clock.set_clock(None)
    assert statuses(done) == {"main/soft": "succeeded", "main/hard": "failed", "main/after": "succeeded"}
    assert steps(done)["main/hard"].error == "no signal within 60 s"
    assert steps(done)["main/soft"].signal.message == {"v": "none"}
    assert done.status == "failed"


def test_a_restarted_wait_waits_afresh(tmp_path):
    from swamp.util import clock

    repo = _repo(tmp_path, "again", """\
jobs:
  - name: main
    steps:
      - name: gate
        task: {type: wait_for_signal, timeout: 60}
""")
    run(repo, "again")
    clock.set_clock(lambda: time.time() + 120)
    try:
        failed = resume(repo, "again")
    finally:
        clock.set_clock(None)
    assert failed.status == "failed"
    restarted = invoke(repo, "workflow", "resume", "again", "--from", "gate")
    assert restarted.data["status"] == "suspended"  # waiting again: the old timeout does not count
    assert _signal(repo, "again", "gate", "--data", '{"ok": true}').code == 0
    assert invoke(repo, "workflow", "resume", "again").data["status"] == "succeeded"
