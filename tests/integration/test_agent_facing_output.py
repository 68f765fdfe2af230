"""What an agent reads after something went wrong (issue 25, "For AI
agents"): a failed command's stderr in the step's --json record, a forEach
item restarted by the name the record shows, the CalVer rule said where a
type goes missing, and `doctor` failing on a local type file that does not
load."""

from __future__ import annotations

from tests.helpers import cli, init_repo, invoke, write_deploy_with_secret, write_shell, write_type, write_workflow


def _failing_repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "ok", "type: command/shell\nname: ok\nglobalArguments:\n  run: echo fine\n")
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        globalArguments:
          run: 'echo out; echo "first" >&2; echo "the disk is full" >&2; exit 3'
        """)
    write_workflow(repo, "w", """
        jobs:
          - name: j
            steps:
              - name: "each-${{ self.r }}"
                forEach: {item: r, in: "${{ ['a', 'b'] }}"}
                task: {type: model_method, modelIdOrName: ok, methodName: execute}
              - name: fail
                task: {type: model_method, modelIdOrName: boom, methodName: execute}
        """)
    return repo


def test_a_failed_steps_json_record_carries_the_tail_of_its_stderr(tmp_path):
    repo = _failing_repo(tmp_path)
    r = cli(repo, "workflow", "run", "w")
    assert r.code == 1
    step = next(s for j in r.data["jobs"] for s in j["steps"] if s["name"] == "fail")
    assert step["error"] == "command exited with code 3"
    assert step["stderrTail"] == "first | the disk is full"
    assert r.data["failureReason"] == step["error"]
    method = cli(repo, "model", "method", "run", "boom", "execute")
    assert method.code == 1 and method.data["error"] == "command exited with code 3"
    assert method.data["stderrTail"] == "first | the disk is full"


def test_the_stderr_tail_in_an_error_is_redacted(tmp_path):
    secret = "s3cr3t-value-for-the-tail"
    repo = init_repo(tmp_path / "repo")
    write_deploy_with_secret(repo, secret)
    write_shell(repo, "leak", """
        type: command/shell
        name: leak
        globalArguments:
          run: 'echo "token was $T" >&2; exit 1'
          env:
            T: "${{ vault.get('prod', 'api.token') }}"
        """)
    r = cli(repo, "model", "method", "run", "leak", "execute")
    assert r.code == 1 and r.data["stderrTail"] == "token was ***", r
    assert secret not in r.stdout + r.stderr


def test_resume_from_takes_a_foreach_items_name_as_the_record_shows_it(tmp_path):
    repo = _failing_repo(tmp_path)
    first = cli(repo, "workflow", "run", "w")
    assert first.code == 1
    shown = [s["name"] for j in first.data["jobs"] for s in j["steps"]]
    assert "each-a" in shown
    for name in ("each-a", "j/each-b"):
        again = cli(repo, "workflow", "resume", "w", "--from", name)
        assert again.code == 1, again  # 'fail' still fails; the items ran again
        assert again.data["id"] == first.data["id"]
        items = [s for j in again.data["jobs"] for s in j["steps"] if s.get("forEachOf")]
        assert [s["status"] for s in items] == ["succeeded", "succeeded"]
    unknown = cli(repo, "workflow", "resume", "w", "--from", "each-z")
    assert unknown.code == 1 and unknown.error["code"] == "not_found"


BAD_VERSION = """
    from swamp import ModelType
    t = ModelType("acme/bad", version="1.0.0")
"""
GOOD = """
    from swamp import ModelType
    t = ModelType("acme/good", version="2026.11.30.1")
"""


def test_doctor_fails_on_local_type_files_that_do_not_load_and_names_the_calver_rule(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_type(repo, "good.py", GOOD)
    write_type(repo, "bad.py", BAD_VERSION)
    write_type(repo, "broken.py", "from swamp import ModelType\nt = ModelType('acme/broken'\n")
    r = invoke(repo, "doctor", "extensions")
    assert r.code == 1
    checks = {c["check"]: c for c in r.data["checks"]}
    bad = checks["extensions.local.bad.py"]
    assert bad["status"] == "fail" and "is not CalVer YYYY.MM.DD.N" in bad["message"]
    assert "such as 20" in bad["message"] and "left out of 'model type search'" in bad["message"]
    assert checks["extensions.local.broken.py"]["message"].startswith("extensions/models/broken.py:2:")
    assert checks["extensions.local"]["message"] == "1 local model type(s) load: acme/good"
    search = cli(repo, "model", "type", "search")
    assert [t["type"] for t in search.data] == ["acme/good", "command/shell"]
    assert "is not CalVer" in search.stderr  # the warning names the rule too


def test_doctor_is_green_when_every_local_type_file_loads(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_type(repo, "good.py", GOOD)
    r = invoke(repo, "doctor", "extensions")
    assert r.code == 0, r


def test_every_bad_argument_is_named_at_once_not_only_the_first(tmp_path):
    repo = init_repo(tmp_path / "repo")
    created = cli(repo, "model", "create", "command/shell", "two", "--global-arg", "timeout=abc",
                  "--global-arg", "ignoreExitCode=maybe", "--global-arg", "nope=1")
    assert created.code == 1
    message = created.error["error"]
    assert "timeout: 'abc' is not a valid integer" in message
    assert "ignoreExitCode: 'maybe' is not a valid boolean" in message
    assert "no global argument 'nope'" in message
    assert not (repo / "models" / "command" / "shell" / "two.yaml").exists()
    write_shell(repo, "ok", "type: command/shell\nname: ok\nglobalArguments:\n  run: echo fine\n")
    ran = cli(repo, "model", "method", "run", "ok", "execute", "--input", "timeout=abc",
              "--input", "ignoreExitCode=maybe")
    assert ran.code == 1
    assert ran.error["error"] == ("model 'ok' method 'execute': invalid input ignoreExitCode: 'maybe' is not a "
                                  "valid boolean; invalid input timeout: 'abc' is not a valid integer")
    direct = cli(repo, "model", "method", "run", "command/shell", "execute", "adhoc", "--input", "run=echo hi",
                 "--input", "timeout=abc", "--input", "ignoreExitCode=maybe")
    assert direct.code == 1 and "timeout" in direct.error["error"] and "ignoreExitCode" in direct.error["error"]


def test_a_resumed_run_says_so_and_from_where(tmp_path):
    """The flow AGENTS.md teaches: the run waits for an approval (exit 0),
    fails after it, is fixed and resumed from the failed step; its record
    and every line that shows it say that it was resumed, and from where."""
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "builder", "type: command/shell\nname: builder\nglobalArguments:\n  run: echo built\n")
    write_shell(repo, "publisher", """
        type: command/shell
        name: publisher
        globalArguments:
          run: 'test -f ready || { echo "ready is missing" >&2; exit 1; }'
        """)
    write_workflow(repo, "release", """
        jobs:
          - name: ship
            steps:
              - name: build
                task: {type: model_method, modelIdOrName: builder, methodName: execute}
              - name: approve
                dependsOn: [{step: build, condition: {type: succeeded}}]
                task: {type: manual_approval, prompt: "ship it?"}
              - name: publish
                dependsOn: [{step: approve, condition: {type: succeeded}}]
                task: {type: model_method, modelIdOrName: publisher, methodName: execute}
        """)
    waiting = cli(repo, "workflow", "run", "release")
    assert waiting.code == 0 and waiting.data["status"] == "suspended", waiting
    assert "resumes" not in waiting.data
    approved = cli(repo, "workflow", "approve", "release", "approve")
    assert approved.code == 1, approved
    record = cli(repo, "workflow", "history", "get", "release").data
    assert [(r["was"], r.get("fromStep")) for r in record["resumes"]] == [("suspended", None)]
    assert record["failureReason"] == "command exited with code 1"
    assert record["failureStderrTail"] == "ready is missing"
    (repo / "ready").touch()
    resumed = cli(repo, "workflow", "resume", "release", "--from", "publish", json=False)
    assert resumed.code == 0, resumed
    assert "succeeded" in resumed.stdout and "(resumed 2 times, last from publish after it failed)" in resumed.stdout
    record = cli(repo, "workflow", "history", "get", "release").data
    assert record["status"] == "succeeded"
    assert [(r["was"], r.get("fromStep")) for r in record["resumes"]] == [("suspended", None), ("failed", "publish")]
    assert all(r["by"] and r["at"] for r in record["resumes"])
    shown = cli(repo, "workflow", "history", "get", "release", json=False)
    assert "(resumed 2 times, last from publish after it failed)" in shown.stdout.splitlines()[0]
