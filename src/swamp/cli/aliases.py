"""Upstream's other names for commands swamp has (`model type list` for
`model type search`, ...): the same command under a second name, hidden
from help pages and the CLI reference so each command is documented once,
yet taken wherever a script written for upstream uses it."""

from __future__ import annotations

import copy

import click


def hidden_alias(group, command: click.Command, name: str) -> None:
    """Add ``command`` to ``group`` (a click group, or a command with
    subcommands) as ``name``, hidden."""
    alias = copy.copy(command)
    alias.hidden = True
    alias.name = name
    if isinstance(group, click.Group):
        group.add_command(alias, name)
    else:  # groups.CommandWithSubcommands
        group.subcommands[name] = alias
