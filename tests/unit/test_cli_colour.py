"""Colour for a person at a terminal, and only there (issue 16, item 8):
run states, error/warning/hint labels, validation marks and diffs are
coloured on a real (pseudo-)terminal; never with --no-color, with NO_COLOR
set to anything, in --json or quiet mode, or into a pipe. Coloured tables
stay aligned, and sizes are shown in one style."""

from __future__ import annotations

import re

import pytest

from tests.helpers import cli, init_repo, on_a_terminal

ESC = "\x1b["
GREEN, RED, YELLOW, DIM = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[2m"


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.fixture(autouse=True)
def _a_colour_terminal(monkeypatch):
    """Whatever the machine running the tests says, the terminal can colour."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("colour") / "r")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi").code == 0
    assert cli(repo, "model", "method", "run", "hello", "execute").code == 0
    return repo


def tty(repo, *args, env=None) -> str:
    return on_a_terminal([*args, "--repo-dir", str(repo)], env=env, colour=True)


def test_a_terminal_gets_colour(repo):
    error = tty(repo, "model", "get", "nope")
    assert f"{RED}error:" in error and f"{DIM}hint:" in error
    assert plain(error).startswith("error: no model named 'nope'")
    assert f"{GREEN}ok" in tty(repo, "model", "validate")
    runs = tty(repo, "model", "output", "search", "hello")
    assert f"{GREEN}succeeded" in runs
    summary = tty(repo, "model", "method", "run", "hello", "execute")
    assert f"hello.execute: {GREEN}succeeded" in summary


def test_coloured_table_cells_keep_the_columns_aligned(repo):
    lines = [ln for ln in plain(tty(repo, "model", "output", "search", "hello")).splitlines() if ln.strip()]
    header, rows = lines[0], lines[1:]
    assert rows
    at = header.index("STARTEDAT")
    for row in rows:
        assert row[at - 2:at] == "  " and row[at] != " ", (header, row)


def test_no_color_option_and_no_color_variable_turn_it_off(repo):
    for shown in (tty(repo, "model", "get", "nope", "--no-color"),
                  tty(repo, "--no-color", "model", "output", "search", "hello"),
                  tty(repo, "model", "get", "nope", env={"NO_COLOR": "1"}),
                  tty(repo, "model", "output", "search", "hello", env={"NO_COLOR": "1"}),
                  tty(repo, "model", "validate", env={"NO_COLOR": ""})):  # set to anything, empty included
        assert ESC not in shown, shown
    assert "error: no model named 'nope'" in tty(repo, "model", "get", "nope", "--no-color")


def test_json_and_quiet_mode_are_never_coloured_even_on_a_terminal(repo):
    shown = tty(repo, "model", "output", "search", "hello", "--json")
    assert ESC not in shown and '"status": "succeeded"' in shown
    assert ESC not in tty(repo, "model", "get", "nope", "--json")
    quiet = tty(repo, "model", "get", "nope", "-q")
    assert ESC not in quiet and "error: no model named 'nope'" in quiet


def test_a_pipe_is_never_coloured(repo):
    for args in (("model", "output", "search", "hello"), ("model", "validate"), ("model", "get", "nope"),
                 ("model", "method", "run", "hello", "execute")):
        r = cli(repo, *args, json=False)
        assert ESC not in r.stdout + r.stderr, r


def test_a_difference_is_coloured_on_a_terminal(tmp_path):
    init_repo(tmp_path)
    (tmp_path / "AGENTS.md").write_text("my own notes\n")
    shown = on_a_terminal(["repo", "init", str(tmp_path), "--force"], b"n\n", colour=True)
    assert f"{RED}-my own notes" in shown
    assert re.search(r"\x1b\[32m\+", shown), shown  # swamp's lines, added
    assert (tmp_path / "AGENTS.md").read_text() == "my own notes\n"
    plain_shown = on_a_terminal(["repo", "init", str(tmp_path), "--force", "--no-color"], b"n\n", colour=True)
    assert "-my own notes" in plain_shown and ESC not in plain_shown


def test_sizes_read_in_one_style(repo):
    from swamp.cli.output import human_size

    assert [human_size(n) for n in (0, 512, 1536, 20 * 2**20, 3 * 2**30)] == [
        "0 B", "512 B", "1.5 KiB", "20.0 MiB", "3.0 GiB"]
    versions = cli(repo, "data", "versions", "hello", "result", json=False)
    assert versions.code == 0 and re.search(r"\d+ B\n", versions.stdout), versions
    got = cli(repo, "data", "get", "hello", "result", "--no-content", json=False)
    assert got.code == 0 and re.search(r"\(resource, \d+ B, ", got.stdout), got


def test_datastore_status_and_type_describe_read_without_json(repo):
    status = cli(repo, "datastore", "status", json=False)
    assert status.code == 0, status
    lines = status.stdout.splitlines()
    assert lines[0].startswith("datastore: filesystem at ")
    values = {re.match(r"[^:]*:\s*", ln).end() for ln in lines}
    assert len(values) == 1, status.stdout  # the values start in one column
    described = cli(repo, "model", "type", "describe", "command/shell", json=False)
    assert described.code == 0, described
    out = described.stdout
    assert not out.lstrip().startswith("{") and "{'" not in out
    assert out.startswith("command/shell ")
    assert re.search(r"^  run +string +required +The command", out, re.M), out
    assert re.search(r"^  execute +\(action\)", out, re.M), out


def test_a_workflow_runs_steps_and_doctor_checks_are_coloured_on_a_terminal(repo):
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-hi.yaml").write_text(
        "name: hi\njobs:\n  - name: j\n    steps:\n      - name: s\n        task:\n"
        "          type: model_method\n          modelIdOrName: hello\n          methodName: execute\n")
    shown = tty(repo, "workflow", "run", "hi")
    assert f"{GREEN}succeeded" in shown, shown
    assert "workflow hi: run " in plain(shown)
    piped = cli(repo, "workflow", "run", "hi", json=False)
    assert piped.code == 0 and ESC not in piped.stdout + piped.stderr
    checks = tty(repo, "doctor", "workflows")
    assert f"{GREEN}OK  {ESC}" in checks or f"{GREEN}OK" in checks, checks
    assert ESC not in tty(repo, "doctor", "workflows", "--no-color")
