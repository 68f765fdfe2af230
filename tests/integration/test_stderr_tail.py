"""A failed command's last lines of stderr are a field of their own
(``stderrTail``), beside a short error (the exit code or the timeout): in
`model method run --json`, the workflow run's step and run records, `workflow
history get`, the run's log and the human output; redacted like the error;
and records written before the field existed still load."""

from __future__ import annotations

import json

from tests.helpers import assert_secrets_nowhere, cli, datastore_root, init_repo, invoke, write_shell, write_workflow

BOOM = """
    type: command/shell
    name: boom
    globalArguments:
      run: 'echo out; echo "first" >&2; echo "the disk is full" >&2; exit 3'
    """


def _repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "boom", BOOM)
    write_workflow(repo, "w", """
        jobs:
          - name: j
            steps:
              - name: fail
                task: {type: model_method, modelIdOrName: boom, methodName: execute}
        """)
    return repo


def _step(doc: dict, name: str) -> dict:
    return next(s for j in doc["jobs"] for s in j["steps"] if s["name"] == name)


def test_a_method_runs_json_keeps_the_exit_code_as_its_error_and_the_tail_apart(tmp_path):
    repo = _repo(tmp_path)
    r = invoke(repo, "model", "method", "run", "boom", "execute")
    assert r.code == 1
    assert r.data["error"] == "command exited with code 3"
    assert r.data["stderrTail"] == "first | the disk is full"
    human = invoke(repo, "model", "method", "run", "boom", "execute", json=False)
    lines = human.stdout.splitlines()
    at = lines.index("  error: command exited with code 3")
    assert lines[at + 1] == "  stderr: first | the disk is full"  # printed under the error


def test_a_workflow_steps_record_and_the_runs_carry_the_tail_as_a_field(tmp_path):
    repo = _repo(tmp_path)
    r = invoke(repo, "workflow", "run", "w")
    assert r.code == 1
    step = _step(r.data, "fail")
    assert (step["error"], step["stderrTail"]) == ("command exited with code 3", "first | the disk is full")
    assert (r.data["failureReason"], r.data["failureStderrTail"]) == (step["error"], step["stderrTail"])
    got = invoke(repo, "workflow", "history", "get", "w")
    assert _step(got.data, "fail")["stderrTail"] == "first | the disk is full"
    shown = invoke(repo, "workflow", "history", "get", "w", json=False)
    assert "stderr of j/fail: first | the disk is full" in shown.stdout.splitlines()
    log = invoke(repo, "workflow", "logs", "w")
    assert "step j/fail: stderr: first | the disk is full" in log.data["log"]
    run_human = invoke(repo, "workflow", "run", "w", json=False)
    assert "stderr of j/fail: first | the disk is full" in run_human.stdout.splitlines()
    followed = invoke(repo, "workflow", "history", "get", "w", "--follow", json=False)
    lines = followed.stdout.splitlines()
    assert "      stderr: first | the disk is full" in lines  # under the step's line as it changes
    assert "stderr of j/fail: first | the disk is full" in lines  # and under the table at the end


def test_a_timed_out_command_says_so_in_its_error_and_keeps_what_it_printed_in_the_tail(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "slow", """
        type: command/shell
        name: slow
        globalArguments:
          run: 'echo "still working" >&2; sleep 30'
          timeout: 300
        """)
    r = invoke(repo, "model", "method", "run", "slow", "execute")
    assert r.code == 1
    assert r.data["error"] == "command timed out after 300 ms"
    assert r.data["stderrTail"] == "still working"  # our own "timed out" note is in the error only


def test_a_command_that_printed_nothing_on_stderr_has_no_tail(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "quiet", "type: command/shell\nname: quiet\nglobalArguments:\n  run: 'exit 4'\n")
    r = invoke(repo, "model", "method", "run", "quiet", "execute")
    assert r.code == 1 and r.data["error"] == "command exited with code 4"
    assert "stderrTail" not in r.data


def test_a_vault_secret_printed_on_stderr_is_masked_in_the_tail_everywhere(tmp_path):
    secret = "s3cr3t-tail-value-9f2"
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "vault", "create", "local_encryption", "prod").code == 0
    assert cli(repo, "vault", "put", "prod", "api.token", input=secret).code == 0
    write_shell(repo, "leak", """
        type: command/shell
        name: leak
        globalArguments:
          run: 'echo "token was $T" >&2; exit 1'
          env:
            T: "${{ vault.get('prod', 'api.token') }}"
        """)
    write_workflow(repo, "w", """
        jobs:
          - name: j
            steps:
              - name: leak
                task: {type: model_method, modelIdOrName: leak, methodName: execute}
        """)
    method = cli(repo, "model", "method", "run", "leak", "execute")
    assert method.code == 1 and method.data["stderrTail"] == "token was ***", method
    run = cli(repo, "workflow", "run", "w")
    assert _step(run.data, "leak")["stderrTail"] == "token was ***"
    shown = cli(repo, "workflow", "history", "get", "w", json=False)
    assert "stderr of j/leak: token was ***" in shown.stdout
    assert_secrets_nowhere(repo, (secret,), method, run, shown)


def test_records_written_before_the_field_existed_still_load(tmp_path):
    repo = _repo(tmp_path)
    r = invoke(repo, "workflow", "run", "w")
    assert r.code == 1
    # As last round wrote them: the tail inside the error, no stderrTail anywhere.
    old_error = "command exited with code 3; stderr: first | the disk is full"
    (path,) = (datastore_root(repo) / "workflow-runs").rglob(f"workflow-run-{r.data['id']}.yaml")
    doc = json.loads(path.read_text())
    doc.pop("failureStderrTail")
    doc["failureReason"] = old_error
    for job in doc["jobs"]:
        for s in job["steps"]:
            s.pop("stderrTail", None)
            s["error"] = old_error
    path.write_text(json.dumps(doc, indent=2))
    outputs = list((datastore_root(repo) / "outputs").rglob("*.yaml"))
    assert outputs
    for p in outputs:
        p.write_text("\n".join(line for line in p.read_text().splitlines() if not line.startswith("stderrTail:")))
    got = invoke(repo, "workflow", "history", "get", r.data["id"])
    assert got.code == 0, got
    assert _step(got.data, "fail")["error"] == old_error and "stderrTail" not in _step(got.data, "fail")
    shown = invoke(repo, "workflow", "history", "get", r.data["id"], json=False)
    assert shown.code == 0 and "stderr of" not in shown.stdout
    search = invoke(repo, "model", "output", "search", "boom")
    assert search.code == 0 and search.data, search
