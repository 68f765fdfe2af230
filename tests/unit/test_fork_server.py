"""The suite's commands run as children forked from one process that has the
third-party libraries imported (tests/fork_server.py). A forked command
must be indistinguishable from `python -m swamp` in a new interpreter in
what a test can see: its output, exit code, standard input, working
directory, environment, and what it leaves on disk; and a command that
outlives its timeout is killed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import fork_client
from tests.helpers import _env, cli, init_repo, write_model

FORKED: dict = {}
REAL = {fork_client.FRESH_PROCESS: "1"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


def _both(repo: Path, *args, **kw):
    forked = cli(repo, *args, env={**kw.pop("env", {}), **FORKED}, **kw)
    real = cli(repo, *args, env={**kw.pop("env", {}), **REAL}, **kw)
    return forked, real


def test_the_commands_are_forked_at_all():
    """Without this the rest would compare a real interpreter with itself."""
    got = fork_client.run(["--version"], _env(), os.getcwd(), None, 30, server_env=_env)
    assert got is not None and got.returncode == 0 and got.stdout.startswith("swamp ")


@pytest.mark.parametrize("args", [("--version",), ("model", "get", "nosuch"), ("model", "search"),
                                  ("no-such-command",), ("model", "create")],
                         ids=["version", "not-found", "empty-search", "usage", "missing-arg"])
def test_output_and_exit_code_are_those_of_a_new_interpreter(repo, args):
    forked, real = _both(repo, *args)
    assert (forked.code, forked.stdout, forked.stderr) == (real.code, real.stdout, real.stderr)


def test_standard_input_reaches_the_command(repo):
    assert cli(repo, "vault", "create", "local_encryption", "prod", env=FORKED).code == 0
    assert cli(repo, "vault", "put", "prod", "tok", input="forked-in\n", env=FORKED).code == 0
    got = cli(repo, "vault", "get", "prod", "tok", json=False, env=REAL)
    assert (got.code, got.stdout) == (0, "forked-in\n")


def test_working_directory_and_environment_are_the_commands(repo):
    write_model(repo, "hello")
    # no --repo-dir: the repository is found from the working directory
    forked = cli(None, "model", "get", "hello", cwd=repo)
    assert forked.code == 0 and forked.data["name"] == "hello", forked
    # an environment variable the command reads at run time
    missing = cli(None, "model", "get", "hello", cwd=repo.parent, env={"SWAMP_REPO_DIR": str(repo)})
    assert missing.code == 0 and missing.data["name"] == "hello", missing


def test_a_command_past_its_timeout_is_killed_and_the_next_one_runs(repo, tmp_path):
    """As subprocess.run(timeout=...) does: TimeoutExpired, the command
    killed (its run lease is left to expire, as after a SIGKILL)."""
    assert cli(repo, "model", "create", "command/shell", "slow", "--global-arg", "run=sleep 30").code == 0
    with pytest.raises(subprocess.TimeoutExpired):
        cli(repo, "model", "method", "run", "slow", "execute", timeout=0.5)
    assert cli(repo, "model", "get", "slow").data["name"] == "slow"
