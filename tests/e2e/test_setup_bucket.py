"""`datastore setup` refuses a bucket that does not exist (some servers
would create it on the first write, so a typo would be filled silently),
creates it only with --create-bucket, and says what it switched from and to
(issue 16, item 11)."""

from __future__ import annotations

import uuid

from tests.helpers import cli, init_repo


def _args(server, bucket: str, *more: str) -> list[str]:
    return ["datastore", "setup", "s3", "--bucket", bucket, "--prefix", "p", "--endpoint-url", server.endpoint_url,
            "--region", "us-east-1", *more]


def test_a_missing_bucket_is_refused_then_created_on_request(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    bucket = f"typo-{uuid.uuid4().hex[:10]}"
    refused = cli(repo, *_args(seaweedfs, bucket))
    assert refused.code == 1 and refused.error["code"] == "no_such_bucket"
    assert bucket in refused.error["error"] and "--create-bucket" in refused.error["hint"]
    assert "type: s3" not in (repo / ".swamp.yaml").read_text()
    # the refusal wrote nothing: the bucket is still missing
    assert cli(repo, *_args(seaweedfs, bucket)).error["code"] == "no_such_bucket"

    done = cli(repo, *_args(seaweedfs, bucket, "--create-bucket"))
    assert done.code == 0 and done.data["bucketCreated"] is True
    assert done.data["from"] == str(repo / ".swamp") and done.data["location"] == f"s3://{bucket}/p"
    again = cli(repo, *_args(seaweedfs, bucket, "--create-bucket"))
    assert again.code == 0 and again.data["bucketCreated"] is False and again.data["from"] == f"s3://{bucket}/p"


def test_the_human_output_says_from_and_to(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    shown = cli(repo, *_args(seaweedfs, seaweedfs.bucket), json=False)
    assert shown.code == 0, shown
    assert f"Datastore was {repo / '.swamp'}; it is now s3://{seaweedfs.bucket}/p" in shown.stdout


def test_a_missing_gcs_bucket_is_refused_then_created(tmp_path, fake_gcs):
    repo = init_repo(tmp_path / "r")
    bucket = f"typo-{uuid.uuid4().hex[:10]}"
    args = ["datastore", "setup", "gcs", "--bucket", bucket, "--endpoint-url", fake_gcs.endpoint_url]
    refused = cli(repo, *args)
    assert refused.code == 1 and refused.error["code"] == "no_such_bucket"
    done = cli(repo, *args, "--create-bucket")
    assert done.code == 0 and done.data["bucketCreated"] is True
