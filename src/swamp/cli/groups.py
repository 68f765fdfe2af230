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


class CommandWithSubcommands(click.Command):
    """A command whose first argument may instead name a subcommand:
    ``swamp workflow run NAME`` runs NAME, while ``swamp workflow run search``
    searches runs. Unlike a group, the command keeps its own options and
    ``--help``. A workflow that is really named "search" runs when an option
    comes first: ``swamp workflow run --fail-on low search``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands: dict[str, click.Command] = {}

    def subcommand(self, name: str, **kwargs):
        def decorator(f):
            cmd = click.command(name, **kwargs)(f)
            self.subcommands[name] = cmd
            return cmd
        return decorator

    def make_context(self, info_name, args, parent=None, **extra):
        if args and args[0] in self.subcommands:
            sub = self.subcommands[args[0]]
            return sub.make_context(f"{info_name} {args[0]}", list(args[1:]), parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):
        if ctx.command is not self:  # make_context chose a subcommand
            return ctx.command.invoke(ctx)
        return super().invoke(ctx)
