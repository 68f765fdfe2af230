"""Each command registers its own --server handler (cli/remote_handlers.py),
so cli/options.py needs no import of the commands that import it. What a
user sees must not depend on which command modules happen to be loaded:
the refusal of --server on a local-only command names every command that
runs on a server, and a help page shows --server exactly where it works."""

from __future__ import annotations

from tests.helpers import cli, init_repo

# Every command with a handler today; one added is added here too.
ON_A_SERVER = sorted([
    "access check", "access grant create", "access grant list", "access grant revoke", "access group add-member",
    "access group create", "access group list", "access group members", "access group remove-member",
    "access reload", "data get", "data list", "data versions", "model method run", "serve reload",
    "workflow approve", "workflow cancel", "workflow history", "workflow history get", "workflow history list",
    "workflow reject", "workflow resume", "workflow run", "workflow signal", "workflow signals",
])


def test_a_local_command_refusing_server_names_every_command_that_runs_there(tmp_path):
    repo = init_repo(tmp_path / "repo")
    refused = cli(repo, "model", "search", "--server", "http://127.0.0.1:9")
    assert refused.code == 2 and refused.error["code"] == "usage"
    listed = refused.error["error"].split("--server is for: ", 1)[1].split(", ")
    assert listed == ON_A_SERVER


def test_help_shows_server_where_a_handler_is_registered_in_another_module(tmp_path):
    # `workflow signal` registers its handler in cli/workflow_signals.py, `access reload` in
    # cli/access_reload.py, `model method run` in cli/remote.py itself
    for command in (["workflow", "signal"], ["access", "reload"], ["model", "method", "run"]):
        page = cli(None, *command, "--help", json=False, cwd=tmp_path)
        assert page.code == 0 and "--server" in page.stdout, command
    local = cli(None, "model", "search", "--help", json=False, cwd=tmp_path)
    assert local.code == 0 and "--server" not in local.stdout


def test_the_options_module_reaches_no_command_module():
    # the circle options -> remote -> access_reload/workflow_signals -> options is gone
    import ast
    from pathlib import Path

    import swamp.cli.options
    import swamp.cli.remote

    for module in (swamp.cli.options, swamp.cli.remote):
        tree = ast.parse(Path(module.__file__).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                     for a in n.names if n.module == "swamp.cli"}
        assert not imported & {"swamp.cli.access_reload", "swamp.cli.workflow_signals", "swamp.cli.serve_reload",
                               "swamp.cli.access_admin"}, module.__name__
