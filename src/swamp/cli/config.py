from __future__ import annotations

import json

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table


@click.group()
def config():
    """Settings shared by everyone using this datastore.

    Example: swamp config list"""


def _parse(value: str):
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value  # a bare word is a string


@config.command("set")
@click.argument("key")
@click.argument("value")
@global_options
@click.pass_obj
def set_(state: CliState, key, value):
    """Set KEY to VALUE (JSON, or a plain string).

    Example: swamp config set region eu-west-1"""
    from swamp.app.settings import set_setting

    result = set_setting(state.repo(), key, _parse(value))
    emit(state, result, f"{key} = {json.dumps(result['value'])}")


@config.command("get")
@click.argument("key")
@global_options
@click.pass_obj
def get(state: CliState, key):
    """Print one setting.

    Example: swamp config get region"""
    from swamp.app.settings import get_setting

    value = get_setting(state.repo(), key)
    emit(state, {"key": key, "value": value}, lambda: say(json.dumps(value)))


@config.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """List every setting, sorted.

    Example: swamp config list --json"""
    from swamp.app.settings import list_settings

    settings = list_settings(state.repo())
    rows = [{"key": k, "value": v} for k, v in settings.items()]
    emit(state, settings, lambda: table(rows, ["key", "value"]))


@config.command("unset")
@click.argument("key")
@global_options
@click.pass_obj
def unset(state: CliState, key):
    """Remove a setting.

    Example: swamp config unset region"""
    from swamp.app.settings import unset_setting

    emit(state, unset_setting(state.repo(), key), f"removed {key}")
