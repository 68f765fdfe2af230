"""Every command's --help ends with a one-line example of that very command,
and every option says what it does (issue 16, item 9)."""

from __future__ import annotations

import re

import click
import pytest

from swamp.cli.groups import DefaultCommandGroup
from swamp.cli.main import cli
from swamp.cli.reference import _walk


def _tree() -> list[tuple[str, click.Command, click.Context]]:
    ctx = click.Context(cli, info_name="swamp")
    return [(c.command_path, cmd, c) for cmd, c in _walk(cli, ctx)]


def _paths_of(cmd: click.Command) -> set[str]:
    """Every path a command is reachable by: one command object may be
    registered under two names (`model list` and `model search`)."""
    return {path for path, other, _ in _tree() if other is cmd}


def _accepted(path: str, ctx: click.Context) -> set[str]:
    """A group's default command may be shown without its name
    (`swamp workflow history deploy` lists deploy's runs)."""
    out = {path}
    parent = ctx.parent.command if ctx.parent else None
    if isinstance(parent, DefaultCommandGroup) and path.endswith(" " + parent.default):
        out.add(path[: -len(parent.default) - 1])
    return out


_EXAMPLE = re.compile(r"^\s*Example: (.*)$", re.M)
COMMANDS = _tree()


@pytest.mark.parametrize("path,cmd,ctx", COMMANDS, ids=[p for p, _, _ in COMMANDS])
def test_help_has_an_example_of_the_command(path, cmd, ctx):
    help_text = (cmd.help or "").split("\f", 1)[0]
    examples = _EXAMPLE.findall(help_text)
    assert examples, f"{path}: no 'Example: swamp ...' line in its help"
    wanted = set()
    for p in _paths_of(cmd) or {path}:
        wanted |= _accepted(p, ctx)
    # `EDITOR=vi swamp model edit hello` and `TOKEN=$(swamp vault read-secret ...)` count too
    ok = any(re.search(r"(^|[\s(])" + re.escape(w) + r"($|[\s)])", ex) for ex in examples for w in wanted)
    assert ok, f"{path}: its example {examples} does not run {' or '.join(sorted(wanted))}"


@pytest.mark.parametrize("path,cmd,ctx", COMMANDS, ids=[p for p, _, _ in COMMANDS])
def test_every_option_says_what_it_does(path, cmd, ctx):
    bare = [p.opts[-1] for p in cmd.params
            if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert not bare, f"{path}: options without a description: {bare}"


def test_the_example_is_shown_by_help():
    """The example is the last paragraph of --help as a person sees it."""
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["model", "get", "--help"], obj=None)
    assert result.exit_code == 0, result.output
    paragraphs = [p.strip() for p in result.output.split("Options:")[0].split("\n\n") if p.strip()]
    assert paragraphs[-1].startswith("Example: swamp model get "), result.output


def test_remote_options_are_offered_only_where_they_do_something():
    """--server and --token are accepted everywhere (refused with a reason
    where they cannot work) but shown only by the commands that can run on
    a server, and --token by access can-i, which reads it itself."""
    from click.testing import CliRunner

    def options(*args):
        result = CliRunner().invoke(cli, [*args, "--help"])
        assert result.exit_code == 0, result.output
        return result.output.split("Options:", 1)[1]

    for args in (("completions",), ("model", "get"), ("serve",), ("workflow", "validate")):
        shown = options(*args)
        assert "--server" not in shown and "--token" not in shown, (args, shown)
        assert "--json" in shown
    for args in (("workflow", "run"), ("model", "method", "run"), ("data", "get")):
        shown = options(*args)
        assert "--server URL" in shown and "--token TOKEN" in shown, (args, shown)
    assert "--token TOKEN" in options("access", "can-i")
    assert "--server URL" in options()  # the global options of `swamp --help`


def test_repository_options_are_offered_only_by_commands_that_open_one(tmp_path):
    """--repo-dir and --offline change nothing for a command that never
    opens a repository, so its --help does not offer them; such a command
    works the same from a directory that is no repository."""
    from click.testing import CliRunner

    from swamp.cli.options import NO_REPOSITORY
    from tests.helpers import cli as run

    paths = {p for p, _, _ in COMMANDS}
    assert {"swamp " + k for k in NO_REPOSITORY} <= paths
    for key in sorted(NO_REPOSITORY):
        shown = CliRunner().invoke(cli, [*key.split(), "--help"]).output.split("Options:", 1)[1]
        assert "--repo-dir" not in shown and "--offline" not in shown, (key, shown)
    for key in ("model get", "workflow run", "datastore status"):
        shown = CliRunner().invoke(cli, [*key.split(), "--help"]).output
        assert "--repo-dir" in shown and "--offline" in shown, key
    nowhere = tmp_path / "not-a-repo"
    nowhere.mkdir()
    for args in (("completions", "bash"), ("workflow", "schema", "get"), ("datastore", "type", "search"),
                 ("extension", "new", "acme-tools", "--path", str(tmp_path / "acme-tools"))):
        r = run(nowhere, *args, "--offline")
        assert r.code == 0, (args, r)
