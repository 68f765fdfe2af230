"""What a person sees when a method fails: the error, the last lines of the
run's log (the whole log, traceback included, with -v) and the command that
prints the rest."""

from __future__ import annotations

from tests.helpers import cli, init_repo, write_type

BOOM = '''
from pydantic import BaseModel
from swamp import Context, ModelType

class A(BaseModel):
    pass

boom = ModelType("acme/boom", version="2026.11.30.1", global_arguments=A)

@boom.method(description="Fails half-way")
def go(args: A, ctx: Context) -> None:
    for i in range(8):
        ctx.log(f"step {i}")
    {}["missing"]
'''


def test_a_failed_command_shows_its_stderr_and_where_the_log_is(tmp_path):
    repo = init_repo(tmp_path / "r")
    assert cli(repo, "model", "create", "command/shell", "bad", "--global-arg",
               "run=echo fine; echo 'disk full' >&2; exit 3").code == 0
    r = cli(repo, "model", "method", "run", "bad", "execute", json=False)
    assert r.code == 1
    assert "error: command exited with code 3" in r.stdout
    assert "stderr: disk full" in r.stdout
    out_id = r.stdout.split("swamp model output logs ")[1].split()[0]
    log = cli(repo, "model", "output", "logs", out_id)
    assert "stderr: disk full" in log.data["log"]


def test_a_failed_python_method_shows_the_end_of_its_log_and_the_traceback_with_v(tmp_path):
    repo = init_repo(tmp_path / "r")
    write_type(repo, "boom.py", BOOM)
    assert cli(repo, "model", "create", "acme/boom", "b").code == 0
    r = cli(repo, "model", "method", "run", "b", "go", json=False)
    assert r.code == 1
    assert "error: KeyError: 'missing'" in r.stdout
    assert "-v for all" in r.stdout and "step 0" not in r.stdout  # only the end of it
    assert "full log: swamp model output logs " in r.stdout

    v = cli(repo, "model", "method", "run", "b", "go", "-v", json=False)
    assert v.code == 1
    assert "step 0" in v.stdout and "Traceback (most recent call last)" in v.stdout

    quiet = cli(repo, "model", "method", "run", "b", "go")  # --json: the record only, no log lines
    assert quiet.code == 1 and quiet.data["error"] == "KeyError: 'missing'"


def test_exit_codes_follow_one_rule(tmp_path):
    """2: the command line itself is malformed. 1: it was well formed but
    the command could not do its job (bad input values, unreadable files,
    nothing to act on)."""
    repo = init_repo(tmp_path / "r")
    assert cli(repo, "model", "create", "command/shell", "hi", "--global-arg", "run=echo hi").code == 0
    assert cli(repo, "model", "method", "run", "hi", "execute", "--input", "novalue").code == 2
    unknown = cli(repo, "model", "method", "run", "hi", "execute", "--input", "nope=1")
    unreadable = cli(repo, "model", "method", "run", "hi", "execute", "--input", f"run=@{tmp_path}/missing")
    assert (unknown.code, unreadable.code) == (1, 1)
    assert "cannot read" in unreadable.error["error"]
    released = cli(repo, "datastore", "lock", "release", "model/x/y", "--force")
    assert released.code == 1 and released.error["code"] == "not_found"
    assert "lock status" in released.error["hint"]


SLOW = '''
import time
from pydantic import BaseModel
from swamp import Context, ModelType

class A(BaseModel):
    pass

slow = ModelType("acme/slow", version="2026.11.30.1", global_arguments=A)

@slow.method(description="Takes a while")
def go(args: A, ctx: Context) -> None:
    for i in range(4):
        ctx.log(f"working on part {i}")
        time.sleep(0.6)
'''


def test_a_long_run_shows_a_status_line_on_a_terminal_only(tmp_path):
    from tests.helpers import on_a_terminal

    repo = init_repo(tmp_path / "r")
    write_type(repo, "slow.py", SLOW)
    assert cli(repo, "model", "create", "acme/slow", "s").code == 0
    shown = on_a_terminal(["model", "method", "run", "s", "go", "--repo-dir", str(repo)])
    assert "\rs.go" in shown or "s.go " in shown.split("\r", 1)[-1]
    assert "working on part" in shown  # the last line logged
    assert "s.go: succeeded" in shown
    piped = cli(repo, "model", "method", "run", "s", "go", json=False)
    assert piped.code == 0 and "\r" not in piped.stdout + piped.stderr
    as_json = cli(repo, "model", "method", "run", "s", "go")
    assert as_json.code == 0 and as_json.stderr == "" and as_json.data["status"] == "succeeded"
