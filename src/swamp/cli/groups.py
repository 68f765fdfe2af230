"""A command group whose first argument may also be an argument of its
default command: ``swamp workflow history NAME`` lists NAME's runs, while
``swamp workflow history get ID`` is a subcommand. A word that names a
subcommand is the subcommand (``history list get`` lists a workflow named
"get")."""

from __future__ import annotations

import click


class DefaultCommandGroup(click.Group):
    def __init__(self, *args, default: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default, *args]
        return super().parse_args(ctx, args)
