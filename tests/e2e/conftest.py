"""Fixtures the end-to-end tests share."""

from __future__ import annotations

import pytest

from tests.fixtures.faultproxy import FaultProxy
from tests.helpers import init_repo, ok, peer_from_git


@pytest.fixture
def proxied(tmp_path, seaweedfs):
    """(proxy, a, b): two peers sharing a fresh prefix on SeaweedFS through
    a fault proxy, each with a `hello` command/shell model."""
    with FaultProxy(seaweedfs.endpoint_url) as proxy:
        args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
                "--endpoint-url", proxy.url, "--region", "us-east-1"]
        a = init_repo(tmp_path / "a")
        ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
        ok(a, "datastore", "setup", *args)
        b = peer_from_git(a, tmp_path / "b")
        ok(b, "datastore", "setup", *args)
        yield proxy, a, b
