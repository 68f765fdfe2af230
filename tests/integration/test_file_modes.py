"""Nothing swamp writes is writable by the group or others, whatever the
umask (issue 23, local file modes; the attack of p11_local_file_modes.sh):
under umask 000, as on many CI runners and in container entrypoints, the
real `swamp` command initialises a repository, keeps a secret, mints a
token, runs a method and a workflow, and `swamp serve` starts, answers a
run and keeps its audit log and the local user's token. No file or folder
it made, in the repository, its .swamp/ or the user config, may be
changed by another local user. A step's command inherits the mask too."""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path

import pytest

from tests.helpers import cli, write_workflow
from tests.serve.server import Serve


@pytest.fixture
def umask_000():
    old = os.umask(0)  # the CLI and the server the test starts inherit it
    try:
        yield
    finally:
        os.umask(old)


def writable_by_others(root: Path) -> list[str]:
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & (stat.S_IWGRP | stat.S_IWOTH):
            found.append(f"{oct(mode & 0o777)} {path.relative_to(root.parent)}")
    return sorted(found)


def test_under_umask_000_nothing_swamp_writes_is_writable_by_others(tmp_path, umask_000):
    repo = tmp_path / "repo"
    assert cli(None, "repo", "init", str(repo)).code == 0
    assert cli(repo, "vault", "create", "local_encryption", "prod").code == 0
    assert cli(repo, "vault", "put", "prod", "api.token", input="umask-test-secret").code == 0
    assert cli(repo, "access", "token", "mint", "ci").code == 0
    # the step's command makes a file of its own: it inherits swamp's mask
    made = cli(repo, "model", "create", "command/shell", "hello", "--global-arg",
               f"run=echo hi > {tmp_path / 'made-by-a-step'}")
    assert made.code == 0, made
    ran = cli(repo, "model", "method", "run", "hello", "execute")
    assert ran.code == 0 and ran.data["status"] == "succeeded", ran
    path = write_workflow(repo, "w", textwrap.dedent("""
        jobs:
          - name: j
            steps:
              - name: s
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """))
    path.chmod(0o644)  # written by the test, not by swamp
    wf = cli(repo, "workflow", "run", "w")
    assert wf.code == 0 and wf.data["status"] == "succeeded", wf
    assert cli(repo, "data", "get", "hello", "result").code == 0

    server = Serve(repo, "--dashboard", default_auth=True)  # the local user's token, in the user config
    try:
        answered = server.run_method("hello", "execute", token=server.local_token)
        assert answered.status == 200, answered.doc
    finally:
        server.stop()
    for log in repo.glob("serve-*.log"):
        log.unlink()  # the test's own capture of the server's output

    assert (repo / ".swamp" / "cache" / "serve" / "audit.jsonl").exists()
    assert list(server.config_home.rglob("*")), "serve kept no local token"
    assert writable_by_others(repo) == []
    assert writable_by_others(server.config_home) == []
    assert writable_by_others(tmp_path / "made-by-a-step") == []
