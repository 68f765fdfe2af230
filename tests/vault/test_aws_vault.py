"""The aws_secrets_manager vault end to end, against moto's server mode on
127.0.0.1 (the same API calls swamp makes to AWS): create, put, inspect,
annotate, a method run that uses ${{ vault.get(...) }} with the value
redacted, delete and restore, migrate both ways, and the errors a user
meets (no credentials, unreachable endpoint, unknown key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import assert_secrets_nowhere, cli, init_repo, snapshot, write_shell, write_workflow

SECRET = "aws-held-s3cret-4c1d"
LOCAL = "local-held-s3cret-77e2"

USES_SECRET = """
type: command/shell
name: deployer
globalArguments:
  run: 'echo "token=$TOKEN"'
  env:
    TOKEN: "${{ vault.get('cloud', 'api.token') }}"
"""

WORKFLOW = """
jobs:
  - name: main
    steps:
      - name: deploy
        task:
          type: model_method
          modelIdOrName: deployer
          methodName: execute
"""


def ok(repo, *args, **kw):
    r = cli(repo, *args, **kw)
    assert r.code == 0, r
    return r


def no_secret_anywhere(repo: Path, *results) -> None:
    assert_secrets_nowhere(repo, (SECRET, LOCAL), *results)


@pytest.fixture
def setup(tmp_path, moto_server):
    repo = init_repo(tmp_path / "repo")
    prefix = moto_server.new_prefix()
    ok(repo, "vault", "create", "aws_secrets_manager", "cloud", "--set", f"region={moto_server.region}",
       "--set", f"endpoint_url={moto_server.endpoint}", "--set", f"prefix={prefix}",
       "--set", "recovery_window_days=7")
    return repo, prefix, moto_server


def test_put_get_inspect_and_the_secret_is_in_aws(setup):
    repo, prefix, moto = setup
    put = ok(repo, "vault", "put", "cloud", "api.token", input=SECRET + "\n")
    assert put.data == {"vault": "cloud", "key": "api.token", "overwritten": False}
    # the value lives in Secrets Manager, under the prefix
    assert moto.client().get_secret_value(SecretId=f"{prefix}api.token")["SecretString"] == SECRET
    assert ok(repo, "vault", "put", "cloud", "api.token", input=SECRET + "\n").data["overwritten"] is True
    assert ok(repo, "vault", "list-keys", "cloud").data["keys"] == ["api.token"]
    d = ok(repo, "vault", "describe", "cloud").data
    assert d["reachable"] is True and d["keys"] == ["api.token"] and prefix in d["location"]
    assert d["settings"]["endpoint_url"] == moto.endpoint
    ok(repo, "vault", "annotate", "cloud", "api.token", "owner: platform team")
    info = ok(repo, "vault", "inspect", "cloud", "api.token").data
    assert info["type"] == "aws_secrets_manager" and info["lengthClass"].startswith("medium")
    assert info["createdAt"] and "@" in info["createdBy"]
    assert [n["note"] for n in info["notes"]] == ["owner: platform team"]
    # the notes are in the secret's description, beside it, and never the value
    described = moto.client().describe_secret(SecretId=f"{prefix}api.token")
    assert "platform team" in described["Description"] and SECRET not in described["Description"]
    assert ok(repo, "vault", "read-secret", "cloud", "api.token", "--reveal", json=False).stdout == SECRET
    assert ok(repo, "vault", "validate", "cloud").data["valid"] is True
    no_secret_anywhere(repo, put)


def test_a_method_run_and_a_workflow_use_the_secret_redacted(setup):
    repo, _prefix, _moto = setup
    ok(repo, "vault", "put", "cloud", "api.token", input=SECRET)
    write_shell(repo, "deployer", USES_SECRET)
    write_workflow(repo, "ship", WORKFLOW)
    run = ok(repo, "model", "method", "run", "deployer", "execute")
    result = ok(repo, "data", "get", "deployer", "result")
    assert result.data["content"]["stdout"].startswith("token=***")
    shown = ok(repo, "data", "get", "deployer", "log", json=False)
    wf = ok(repo, "workflow", "run", "ship")
    assert wf.data["status"] == "succeeded", wf
    reads = [(e["key"], e["via"]) for e in ok(repo, "vault", "audit-trail", "cloud").data["events"]
             if e["op"] == "read"]
    assert ("api.token", "model method run deployer execute") in reads
    assert ("api.token", "workflow run ship") in reads
    no_secret_anywhere(repo, run, result, shown, wf)


def test_delete_schedules_and_a_new_put_restores(setup):
    repo, prefix, moto = setup
    ok(repo, "vault", "put", "cloud", "k", input="first-value-1")
    ok(repo, "vault", "delete", "cloud", "k", "-y")
    assert ok(repo, "vault", "list-keys", "cloud").data["keys"] == []
    assert cli(repo, "vault", "inspect", "cloud", "k").error["code"] == "not_found"
    assert moto.client().describe_secret(SecretId=f"{prefix}k").get("DeletedDate")  # recoverable for 7 days
    assert ok(repo, "vault", "put", "cloud", "k", input="second-value-2").data["overwritten"] is False
    assert ok(repo, "vault", "get", "cloud", "k").data["value"] == "second-value-2"


def test_migrate_from_a_local_vault_and_back(setup):
    repo, _prefix, _moto = setup
    ok(repo, "vault", "create", "local_encryption", "laptop")
    ok(repo, "vault", "put", "laptop", "DB_PASS", input=LOCAL)
    ok(repo, "vault", "annotate", "laptop", "DB_PASS", "moved to AWS")
    moved = ok(repo, "vault", "migrate", "laptop", "cloud")
    assert moved.data["moved"] == moved.data["verified"] == moved.data["removedFromSource"] == ["DB_PASS"]
    assert ok(repo, "vault", "list-keys", "laptop").data["keys"] == []
    assert ok(repo, "vault", "get", "cloud", "DB_PASS").data["value"] == LOCAL
    assert [n["note"] for n in ok(repo, "vault", "inspect", "cloud", "DB_PASS").data["notes"]] == ["moved to AWS"]
    back = ok(repo, "vault", "migrate", "cloud", "laptop", "--keys", "DB_PASS")
    assert back.data["moved"] == ["DB_PASS"]
    assert ok(repo, "vault", "get", "laptop", "DB_PASS").data["value"] == LOCAL
    assert ok(repo, "vault", "list-keys", "cloud").data["keys"] == []
    no_secret_anywhere(repo, moved, back)


def test_migrate_into_an_unreachable_vault_loses_nothing(setup, tmp_path):
    repo, _prefix, moto = setup
    ok(repo, "vault", "create", "local_encryption", "laptop")
    ok(repo, "vault", "put", "laptop", "DB_PASS", input=LOCAL)
    ok(repo, "vault", "create", "aws_secrets_manager", "down", "--set", "region=us-east-1",
       "--set", "endpoint_url=http://127.0.0.1:9")
    before = snapshot(repo / ".swamp/secrets/local_encryption")
    failed = cli(repo, "vault", "migrate", "laptop", "down")
    assert failed.code == 1 and "cannot reach AWS Secrets Manager" in failed.error["error"], failed
    assert "Traceback" not in failed.stderr
    assert snapshot(repo / ".swamp/secrets/local_encryption") == before
    assert ok(repo, "vault", "get", "laptop", "DB_PASS").data["value"] == LOCAL
    d = ok(repo, "vault", "describe", "down").data
    assert d["reachable"] is False and "cannot reach" in d["problem"]
    report = cli(repo, "vault", "validate", "down")
    assert report.code == 1 and not report.data["valid"]
    no_secret_anywhere(repo, failed)


def test_errors_a_user_meets(setup):
    repo, _prefix, moto = setup
    missing = cli(repo, "vault", "get", "cloud", "nope")
    assert missing.code == 1 and missing.error["code"] == "not_found" and "vault put cloud nope" in missing.error["hint"]
    no_creds = cli(repo, "vault", "list-keys", "cloud",
                   env={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                        "AWS_CONFIG_FILE": "/nonexistent"})
    assert no_creds.code == 1 and "credentials" in no_creds.error["error"], no_creds
    assert "AWS_ACCESS_KEY_ID" in no_creds.error["hint"]
    bad = cli(repo, "vault", "create", "aws_secrets_manager", "x", "--set", "prefix=has space")
    assert bad.code == 1 and bad.error["code"] == "validation"
    unknown = cli(repo, "vault", "create", "aws_secrets_manager", "x", "--set", "secret_key=abc")
    assert unknown.code == 1 and "region" in unknown.error["hint"]
    # the config in git holds settings only
    config = (repo / "vaults/aws_secrets_manager/cloud.yaml").read_text()
    assert "endpoint_url" in config and "AWS_" not in config
    assert json.dumps(moto.region) in json.dumps(cli(repo, "vault", "describe", "cloud").data["settings"])
