"""Helpers for tests where several repositories (peers) share a datastore,
driven through the `swamp` command in subprocesses."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import cli, init_repo


def ok(repo: Path, *args, **kw):
    """Run a command that must succeed; its one JSON document."""
    r = cli(repo, *args, **kw)
    assert r.code == 0, r
    return r.data


def peer_from_git(origin: Path, path: Path) -> Path:
    """A second checkout: the same definitions, none of the runtime state."""
    init_repo(path)
    shutil.copytree(origin / "models", path / "models", dirs_exist_ok=True)
    return path


def run_hello(repo: Path, text: str) -> dict:
    """Run the `hello` command/shell model, echoing ``text``."""
    return ok(repo, "model", "method", "run", "hello", "execute", "--input", f"run=echo {text}")


def s3_setup_args(server, prefix: str | None = None, gateway: int = 0) -> list[str]:
    """`datastore setup` arguments for a SeaweedFS server (a fresh prefix by default)."""
    return ["s3", "--bucket", server.bucket, "--prefix", prefix or server.new_prefix(),
            "--endpoint-url", server.endpoints[gateway], "--region", "us-east-1"]


def repo_with_hello_runs(path: Path, runs: int) -> Path:
    """A new repository with a `hello` command/shell model run ``runs``
    times (stdout a0, a1, ...)."""
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    for i in range(runs):
        run_hello(repo, f"a{i}")
    return repo
