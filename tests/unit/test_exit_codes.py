"""Exit codes follow the one rule docs/cli.md states (issue 16, item 10):
2 when the command was refused because of how it was called (the command
line is malformed), 1 when the command line was fine but the command could
not do its job (what it names is missing or unreadable, a value is wrong for
what it names, a report found a problem). And the report commands
(`model validate`, `workflow validate`) give one report shape for every
kind of problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli, init_repo

REPORT_KEYS = {"name", "path", "valid", "errors", "problems", "warnings"}  # problems: errors as {path, message}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    repo = init_repo(tmp_path_factory.mktemp("exit") / "r")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi").code == 0
    return repo


def test_the_rule_is_documented():
    from swamp.cli.reference import render

    text = render()
    assert "Exit codes are the same for every command" in text
    for code in ("`0`", "`1`", "`2`", "`75`", "`130`"):
        assert f"- {code}: " in text


def test_releasing_a_lock_nobody_holds_is_an_error_not_a_success(repo):
    r = cli(repo, "datastore", "lock", "release", "workflow-run/nosuch", "--force")
    assert r.code == 1 and r.error["code"] == "not_found", r
    assert "lock status" in r.error["hint"]
    plain = cli(repo, "datastore", "lock", "release", "workflow-run/nosuch", "--force", json=False)
    assert plain.code == 1 and plain.stderr.startswith("error: ") and "Traceback" not in plain.stderr


def test_what_a_well_formed_command_line_names_being_wrong_or_missing_exits_1(repo, tmp_path):
    run = ("model", "method", "run", "hello", "execute")
    unknown_key = cli(repo, *run, "--input", "nope=1")
    unreadable_at_file = cli(repo, *run, "--input", f"run=@{tmp_path}/missing.txt")
    unreadable_input_file = cli(repo, *run, "--input-file", str(tmp_path / "missing.yaml"))
    unreadable_signal = cli(repo, "workflow", "signal", "deploy", "release", "--data", f"@{tmp_path}/missing.json")
    missing_model = cli(repo, "model", "get", "nosuch")
    missing_dir = cli(repo, "extension", "source", "add", str(tmp_path / "no-such-checkout"))
    for r in (unknown_key, unreadable_at_file, unreadable_input_file, unreadable_signal, missing_model, missing_dir):
        assert r.code == 1, r
        assert r.error["code"] != "usage", r
    assert "cannot read" in unreadable_at_file.error["error"]
    assert "cannot read" in unreadable_signal.error["error"]
    assert "does not exist" in missing_dir.error["error"]


def test_a_malformed_command_line_exits_2_and_changes_nothing(repo):
    run = ("model", "method", "run", "hello", "execute")
    for args in ((*run, "--input", "novalue"),             # not KEY=VALUE
                 (*run, "--no-such-option"),                # unknown option
                 ("model", "no-such-command"),              # unknown command
                 ("workflow", "signal", "deploy", "release", "--data", "{not json"),
                 ("datastore", "sync", "--pull", "--push"),  # options that exclude each other
                 ("completions", "powershell")):            # not one of the choices
        r = cli(repo, *args)
        assert r.code == 2, r
        assert r.error["code"] == "usage", r
    assert cli(repo, "data", "list", "hello").data == []  # no run happened


def test_a_missing_path_is_reported_as_an_error_without_json_too(tmp_path):
    r = cli(None, "serve", "--cert-file", str(tmp_path / "no.pem"), "--key-file", str(tmp_path / "no.key"),
            json=False, cwd=tmp_path)
    assert r.code == 1, r
    assert r.stderr.startswith("error: ") and "does not exist" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------- one report shape

def _problem_repo(root: Path) -> Path:
    repo = init_repo(root)
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi").code == 0
    models = repo / "models" / "command" / "shell"
    (models / "broken.yaml").write_text("name: broken\ntype: [\n")                      # malformed YAML
    (models / "extra.yaml").write_text("name: extra\ntype: command/shell\nglobalArguments: {nope: 1}\n")
    flows = repo / "workflows"
    flows.mkdir(exist_ok=True)
    (flows / "workflow-broken.yaml").write_text("name: broken\njobs: [\n")              # malformed YAML
    (flows / "workflow-bad.yaml").write_text("name: bad\njobs: 3\n")                     # schema
    (flows / "workflow-typo.yaml").write_text(
        "name: typo\njobs:\n  - name: j\n    steps:\n      - name: s\n        task:\n"
        "          type: model_method\n          modelIdOrName: helo\n          methodName: execute\n")
    return repo


@pytest.mark.parametrize("kind", ["model", "workflow"])
def test_validate_reports_every_kind_of_problem_in_one_shape(tmp_path, kind):
    repo = _problem_repo(tmp_path / "r")
    r = cli(repo, kind, "validate")
    assert r.code == 1, r
    doc = r.data
    assert set(doc) == {"valid", kind + "s"} and doc["valid"] is False
    entries = doc[kind + "s"]
    for e in entries:
        assert set(e) == REPORT_KEYS, e
        assert e["valid"] == (not e["errors"]), e
        assert all(isinstance(m, str) and "{'" not in m for m in e["errors"] + e["warnings"]), e
    assert [e["path"] for e in entries] == sorted(e["path"] for e in entries)
    # a malformed file named on its own is reported the same way, not as an error document
    one = cli(repo, kind, "validate", "broken")
    assert one.code == 1 and one.stderr == "", one
    [entry] = one.data[kind + "s"]
    assert set(entry) == REPORT_KEYS and entry["valid"] is False and "malformed YAML" in entry["errors"][0]
    # a name that is not there at all is an error (exit 1), with a did-you-mean
    missing = cli(repo, kind, "validate", "helo" if kind == "model" else "tyop")
    assert missing.code == 1 and missing.error["code"] == "not_found", missing
    if kind == "model":
        assert "did you mean 'hello'" in missing.error["hint"]


def test_workflow_validate_says_did_you_mean_as_run_does(tmp_path):
    repo = _problem_repo(tmp_path / "r")
    [typo] = [e for e in cli(repo, "workflow", "validate").data["workflows"] if e["name"] == "typo"]
    assert any("no model named 'helo'" in m and "did you mean 'hello'" in m for m in typo["errors"] + typo["warnings"])
    ran = cli(repo, "model", "method", "run", "helo", "execute")
    assert ran.code == 1 and "did you mean 'hello'" in ran.error["hint"]
    run = cli(repo, "workflow", "run", "typo")
    assert run.code == 1 and run.data["failureReason"] == "no model named 'helo' (did you mean 'hello'?)", run


def test_model_validate_says_did_you_mean_for_a_mistyped_type(tmp_path):
    repo = _problem_repo(tmp_path / "r")
    typo = repo / "models" / "command" / "shel"
    typo.mkdir(parents=True)
    (typo / "v.yaml").write_text("name: v\ntype: command/shel\nglobalArguments: {}\n")
    r = cli(repo, "model", "validate", "v")
    assert r.code == 1, r
    [entry] = r.data["models"]
    assert entry["errors"] == ["unknown model type 'command/shel' (did you mean 'command/shell'?)"]
