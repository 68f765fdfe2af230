"""Pre-flight checks a model type declares for its mutating methods: they
run before the method, and a failing one stops it before anything is
written (docs/reports.md#pre-flight-checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli, datastore_root, init_repo, ok, snapshot, write_type, write_workflow

TARGET_TYPE = '''
from pathlib import Path

from pydantic import BaseModel

from swamp import ModelType
from swamp.models.checks import CheckFailed


class Settings(BaseModel):
    target: str
    token: str = "good"


target = ModelType("acme/target", version="2026.11.30.1", global_arguments=Settings)
target.resource("state", lifetime="infinite")


@target.check(description="the target directory exists")
def target_exists(args, ctx):
    if not Path(args.target).is_dir():
        raise CheckFailed(f"{args.target} does not exist")


@target.check(description="the credentials work")
def credentials_work(args, ctx):
    if args.token != "good":
        return "the token was refused"


@target.method(description="Write a file into the target")
def create(args, ctx):
    (Path(args.target) / "made").write_text("yes")
    ctx.write_resource("state", "state", {"made": True})


@target.method(description="Read the target")
def get(args, ctx):
    ctx.write_resource("state", "state", {"exists": Path(args.target).is_dir()})
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    write_type(repo, "target.py", TARGET_TYPE)
    return repo


def _model(repo: Path, name: str, target: Path, token: str = "good") -> None:
    p = repo / "models" / "acme" / "target" / f"{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"type: acme/target\nname: {name}\nglobalArguments:\n  target: {target}\n  token: {token}\n")


def _state(repo: Path) -> dict:
    root = datastore_root(repo)
    return {k: v for k, v in snapshot(root).items() if k.split("/")[0] in ("data", "outputs")}


def test_a_failing_check_stops_the_method_before_anything_is_written(repo, tmp_path):
    missing = tmp_path / "nowhere"
    _model(repo, "site", missing)
    before = _state(repo)
    r = cli(repo, "model", "method", "run", "site", "create")
    assert r.code == 1, r
    err = r.error
    assert err["code"] == "check_failed"
    assert "target_exists" in err["error"] and f"{missing} does not exist" in err["error"]
    assert "--skip-check target_exists" in err["hint"]
    assert _state(repo) == before  # no output record, no data
    assert not missing.exists()
    human = cli(repo, "model", "method", "run", "site", "create", json=False)
    assert human.code == 1 and "pre-flight check 'target_exists' failed" in human.stderr
    assert "Traceback" not in human.stderr


def test_a_check_that_returns_a_message_fails_too(repo, tmp_path):
    (tmp_path / "there").mkdir()
    _model(repo, "site", tmp_path / "there", token="bad")
    r = cli(repo, "model", "method", "run", "site", "create")
    assert r.code == 1 and r.error["code"] == "check_failed"
    assert "credentials_work" in r.error["error"] and "the token was refused" in r.error["error"]


def test_skip_check_and_skip_checks(repo, tmp_path):
    target = tmp_path / "there"
    target.mkdir()
    _model(repo, "site", target, token="bad")
    # the failing one skipped: the other still runs and passes
    rec = ok(repo, "model", "method", "run", "site", "create", "--skip-check", "credentials_work")
    assert rec["status"] == "succeeded" and (target / "made").read_text() == "yes"
    _model(repo, "gone", tmp_path / "gone", token="bad")
    r = cli(repo, "model", "method", "run", "gone", "create", "--skip-check", "credentials_work")
    assert r.code == 1 and "target_exists" in r.error["error"]
    # every check skipped: the method itself runs (and fails on its own)
    r = cli(repo, "model", "method", "run", "gone", "create", "--skip-checks")
    assert r.code == 1 and r.data["status"] == "failed" and "FileNotFoundError" in r.data["error"]


def test_unknown_check_name_is_a_clear_error(repo, tmp_path):
    _model(repo, "site", tmp_path)
    before = _state(repo)
    r = cli(repo, "model", "method", "run", "site", "create", "--skip-check", "target_exist")
    assert r.code == 1
    assert r.error["code"] == "not_found" and "target_exist" in r.error["error"]
    assert "target_exists" in r.error["hint"]
    assert _state(repo) == before


def test_read_methods_are_not_guarded(repo, tmp_path):
    _model(repo, "site", tmp_path / "nowhere")
    rec = ok(repo, "model", "method", "run", "site", "get")
    assert rec["status"] == "succeeded"


def test_describe_shows_the_checks(repo, tmp_path):
    _model(repo, "site", tmp_path)
    described = ok(repo, "model", "type", "describe", "acme/target")
    assert described["checks"] == {
        "credentials_work": {"description": "the credentials work", "methods": ["create"]},
        "target_exists": {"description": "the target directory exists", "methods": ["create"]},
    }
    assert set(ok(repo, "model", "method", "describe", "site", "create")["checks"]) == \
        {"credentials_work", "target_exists"}
    assert "checks" not in ok(repo, "model", "method", "describe", "site", "get")
    assert "checks" not in ok(repo, "model", "type", "describe", "command/shell")


def test_a_workflow_step_fails_on_its_check_and_skip_checks_reaches_it(repo, tmp_path):
    _model(repo, "site", tmp_path / "nowhere")
    write_workflow(repo, "provision", """
        jobs:
          - name: main
            steps:
              - name: make
                task: {type: model_method, modelIdOrName: site, methodName: create}
    """)
    r = cli(repo, "workflow", "run", "provision")
    assert r.code == 1, r
    step = r.data["jobs"][0]["steps"][0]
    assert step["status"] == "failed" and "target_exists" in step["error"]
    assert "outputId" not in step  # the method never ran
    r = cli(repo, "workflow", "run", "provision", "--skip-check", "target_exists")
    assert r.code == 1 and "FileNotFoundError" in r.data["jobs"][0]["steps"][0]["error"]


def test_model_evaluate_runs_no_check(repo, tmp_path):
    _model(repo, "site", tmp_path / "nowhere")
    shown = ok(repo, "model", "evaluate", "site", "--method", "create")
    assert shown["methods"]["create"]["target"] == str(tmp_path / "nowhere")
