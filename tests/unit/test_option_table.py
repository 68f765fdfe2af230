"""The global options are one table (swamp.cli.option_table): click's options,
the help page printed without click and the flags the fast lane parses
without click are all made from it, so adding a global option is one row."""

from __future__ import annotations

import click

from swamp.cli import fast_help, fast_lane
from swamp.cli.option_table import GLOBAL_OPTIONS


def _root():
    from swamp.cli.main import cli

    return cli


def _global_params(command: click.Command) -> list[click.Option]:
    table_names = {n for o in GLOBAL_OPTIONS for n in o.names}
    return [p for p in command.params if isinstance(p, click.Option) and set(p.opts) & table_names]


def test_clicks_global_options_are_the_table_rows_in_order():
    params = _global_params(_root())
    assert [tuple(p.opts) for p in params] == [o.names for o in GLOBAL_OPTIONS]
    assert [p.help for p in params] == [o.help for o in GLOBAL_OPTIONS]
    assert [p.is_flag for p in params] == [o.metavar is None for o in GLOBAL_OPTIONS]


def test_a_command_takes_every_global_option_after_its_arguments_too():
    root = _root()
    ctx = click.Context(root)
    model = root.get_command(ctx, "model")
    get = model.get_command(click.Context(model, parent=ctx), "get")
    assert [tuple(p.opts) for p in _global_params(get)] == [o.names for o in GLOBAL_OPTIONS]


def test_the_help_page_without_click_lists_the_table_between_version_and_help():
    firsts = [first for first, _ in fast_help.OPTIONS]
    assert firsts[0] == "--version" and firsts[-1] == "-h, --help"
    assert firsts[1:-1] == [o.first_column for o in GLOBAL_OPTIONS]


def test_the_fast_lane_takes_the_table_flags_and_leaves_the_others_to_click():
    for o in GLOBAL_OPTIONS:
        for name in o.names:
            argv = ["data", "get", "m", "n", name] + (["value"] if o.metavar else [])
            parsed = fast_lane.parse(argv, environ={})
            if o.fast and o.metavar is None:
                assert parsed is not None, name
                want = False if o.field == "color" else True  # --no-color turns colour off
                assert getattr(parsed.state, o.field) is want, name
            elif not o.fast:
                assert parsed is None, name  # --server, --token, --traceparent: click's
