"""`swamp --help`, `-h` and a bare `swamp` are printed without click
(swamp.cli.fast_help); the page must be exactly click's, at every width."""

from __future__ import annotations

import os
import subprocess
import sys

import click
import pytest

from swamp.cli import fast_help
from swamp.cli.main import GROUPS, _build

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def _click_page(width: int) -> str:
    # A fresh root group: click caches a command's help option the first time
    # a context asks for it, and other tests make contexts of the shared
    # swamp.cli.main.cli without its context settings (so without -h).
    cli = _build()["cli"]
    ctx = click.Context(cli, info_name="swamp", **{**cli.context_settings, "terminal_width": width})
    return cli.get_help(ctx)


@pytest.mark.parametrize("width", range(50, 79))  # every width the help can be given (50 to 78)
def test_the_page_is_clicks_at_every_width(width):
    page = fast_help.render(GROUPS, width)
    assert page is not None, (
        "a help text is no longer plain (an inner hyphen, two spaces, a very long word): "
        "swamp --help would import click again; rephrase it or teach swamp.cli.fast_help")
    assert page == _click_page(width), (
        "swamp --help differs from click's page: a global option or its help changed? "
        "Update swamp.cli.fast_help.OPTIONS")


def _run(args: list[str], columns: str) -> subprocess.CompletedProcess:
    code = ("import sys\nfrom swamp.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
            "finally:\n    sys.stderr.write('click imported' if 'click' in sys.modules else '')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "_SWAMP_", "SWAMP_"))}
    env.update(COLUMNS=columns, PYTHONPATH=os.path.abspath(SRC))
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)


@pytest.mark.parametrize("columns,width", [("40", 50), ("64", 62), ("80", 78), ("200", 78)])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_printed_without_click(flag, columns, width):
    p = _run([flag], columns)
    assert p.returncode == 0
    assert p.stdout == _click_page(width) + "\n"
    assert "click imported" not in p.stderr


def test_no_arguments_prints_the_page_on_stderr_with_exit_2_as_click_does():
    fast = _run([], "80")
    assert fast.returncode == 2
    assert fast.stdout == ""
    assert fast.stderr == _click_page(78) + "\n"
    # click's own answer to no arguments, through the usual error rendering
    slow = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom swamp.cli.errors import run_cli\nfrom swamp.cli.main import cli\n"
         "sys.exit(run_cli(cli, []))"],
        env={**{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "_SWAMP_", "SWAMP_"))},
             "COLUMNS": "80", "PYTHONPATH": os.path.abspath(SRC)},
        capture_output=True, text=True)
    assert (slow.returncode, slow.stdout, slow.stderr) == (2, "", fast.stderr)


def test_version_is_printed_without_click_as_click_prints_it():
    fast = _run(["--version"], "80")
    assert (fast.returncode, fast.stderr) == (0, "")
    from click.testing import CliRunner

    slow = CliRunner().invoke(_build()["cli"], ["--version"], prog_name="swamp")
    assert (slow.exit_code, slow.output) == (0, fast.stdout)


def test_other_arguments_go_through_click():
    assert fast_help.try_print(["--version", "--json"], GROUPS) is None
    assert fast_help.try_print(["--help", "model"], GROUPS) is None
    assert fast_help.try_print(["model", "--help"], GROUPS) is None
    assert fast_help.try_print(["--json"], GROUPS) is None


def test_a_text_it_cannot_lay_out_falls_back_to_click():
    groups = {**GROUPS, "zzz": ("swamp.cli.zzz", "zzz", "A built-in thing")}
    assert fast_help.render(groups, 78) is None
    groups = {**GROUPS, "zzz": ("swamp.cli.zzz", "zzz", "Two  spaces")}
    assert fast_help.render(groups, 78) is None
