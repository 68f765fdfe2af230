"""Review finding: a method's arguments that read data (`data.latest(...)`)
are evaluated before the command's own pull, so they see the state of the
previous pull although this command pulls a moment later (S3: "a method
diffs against stale state")."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import init_repo
from tests.helpers import ok

pytestmark = pytest.mark.slow


def test_method_arguments_see_what_the_command_pulled(tmp_path, seaweedfs):
    args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
            "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1"]
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "src", "--global-arg", "run=echo one")
    ok(a, "model", "create", "command/shell", "use", "--global-arg",
       "run=echo got ${{ data.latest('src', 'result').content.stdout }}")
    ok(a, "model", "method", "run", "src", "execute")
    ok(a, "datastore", "setup", *args)
    b = init_repo(tmp_path / "b")
    shutil.copytree(a / "models", b / "models", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *args)

    ok(a, "model", "method", "run", "src", "execute", "--input", "run=echo two")
    ok(b, "model", "method", "run", "use", "execute")
    assert ok(b, "data", "get", "src", "result")["content"]["stdout"] == "two"
    assert ok(b, "data", "get", "use", "result")["content"]["stdout"] == "got two"
