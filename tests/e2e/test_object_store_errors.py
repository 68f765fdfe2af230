"""What a person sees when the object store cannot be used: no credentials,
half the credentials, a wrong key, a server that is not there, a read
command on an unreachable remote (issue 16, items 1 and 3). Each says what
went wrong, where, and what to do: never a traceback or the server's raw
XML."""

from __future__ import annotations

import json
import subprocess

from tests.helpers import PYTHON, _env, init_repo, ok, s3_setup_args


def _swamp(repo, *args, drop=(), **extra) -> tuple[int, dict]:
    env = _env(extra)
    for name in drop:
        env.pop(name, None)
    p = subprocess.run([PYTHON, "-m", "swamp", *args, "--json", "--repo-dir", str(repo)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert "Traceback" not in p.stderr and "Debug source" not in p.stderr, p.stderr
    return p.returncode, (json.loads(p.stderr) if p.returncode else json.loads(p.stdout))


def test_no_credentials_says_where_swamp_looked(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    code, err = _swamp(repo, "datastore", "setup", *s3_setup_args(seaweedfs),
                       drop=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), HOME=str(tmp_path),
                       AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    assert code == 1 and err["code"] == "no_credentials"
    assert "no AWS credentials found" in err["error"]
    for place in ("AWS_ACCESS_KEY_ID", str(tmp_path / "none"), "metadata"):
        assert place in err["error"]
    assert "AWS_SECRET_ACCESS_KEY" in err["hint"]
    assert "datastore:\n  type: s3" not in (repo / ".swamp.yaml").read_text()  # nothing switched


def test_credentials_from_the_shared_file_work(tmp_path, seaweedfs):
    creds = tmp_path / "credentials"
    creds.write_text(f"[team]\naws_access_key_id = {seaweedfs.access_key}\n"
                     f"aws_secret_access_key = {seaweedfs.secret_key}\n")
    repo = init_repo(tmp_path / "r")
    code, done = _swamp(repo, "datastore", "setup", *s3_setup_args(seaweedfs),
                        drop=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
                        AWS_SHARED_CREDENTIALS_FILE=str(creds), AWS_PROFILE="team")
    assert code == 0 and done["type"] == "s3"


def test_half_the_credentials(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    code, err = _swamp(repo, "datastore", "setup", *s3_setup_args(seaweedfs), drop=("AWS_SECRET_ACCESS_KEY",))
    assert code == 1 and err["code"] == "no_credentials" and "both" in err["hint"]


def test_a_wrong_key_names_the_servers_code_and_message(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    code, err = _swamp(repo, "datastore", "setup", *s3_setup_args(seaweedfs), AWS_SECRET_ACCESS_KEY="wrong")
    assert code == 1 and err["code"] == "access_denied"
    assert "403 SignatureDoesNotMatch" in err["error"] and seaweedfs.endpoint_url in err["error"]
    assert "<?xml" not in err["error"] and "AWS_SECRET_ACCESS_KEY" in err["hint"]
    code, err = _swamp(repo, "datastore", "setup", *s3_setup_args(seaweedfs), AWS_ACCESS_KEY_ID="nobody")
    assert code == 1 and "InvalidAccessKeyId" in err["error"] and "AWS_ACCESS_KEY_ID" in err["hint"]


def test_a_server_that_is_not_there(tmp_path):
    repo = init_repo(tmp_path / "r")
    code, err = _swamp(repo, "datastore", "setup", "s3", "--bucket", "some-bucket", "--endpoint-url", "http://127.0.0.1:9",
                       "--region", "us-east-1")
    assert code == 1 and "cannot reach http://127.0.0.1:9 (connection refused)" in err["error"]
    assert "--endpoint-url" in err["hint"]


def test_a_read_on_an_unreachable_remote_suggests_offline(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(repo, "datastore", "setup", *s3_setup_args(seaweedfs))
    ok(repo, "model", "method", "run", "hello", "execute")
    config = repo / ".swamp.yaml"
    config.write_text(config.read_text().replace(seaweedfs.endpoint_url, "http://127.0.0.1:9"))
    code, err = _swamp(repo, "data", "list")
    assert code == 1 and "cannot reach" in err["error"] and "--offline" in err["hint"]
    code, rows = _swamp(repo, "data", "list", "--offline")
    assert code == 0 and {r["model"] for r in rows} == {"hello"}  # result and log


def test_no_google_credentials(tmp_path):
    repo = init_repo(tmp_path / "r")
    code, err = _swamp(repo, "datastore", "setup", "gcs", "--bucket", "some-bucket",
                       drop=("STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS"), HOME=str(tmp_path),
                       CLOUDSDK_CONFIG=str(tmp_path / "gcloud"))
    assert code == 1 and err["code"] == "no_credentials" and "GOOGLE_APPLICATION_CREDENTIALS" in err["error"]
    assert "gcloud auth application-default login" in err["hint"]
