"""Options every command takes. They are accepted both before the command
(`swamp --json model get x`) and after it (`swamp model get x --json`)."""

from __future__ import annotations

import click

from swamp.cli.option_table import GLOBAL_OPTIONS, GlobalOption
from swamp.cli.state import CliState  # noqa: F401  (re-exported: it lives without click, for the fast lane)


def _set(field):
    def callback(ctx, param, value):
        state = ctx.ensure_object(CliState)
        if field == "color":
            if value is False:
                state.color = False
        elif value not in (None, False):
            setattr(state, field, value)
        return value

    return callback


def _traceparent(ctx, param, value):
    """Checked here; used by swamp.util.tracing.run_command, which reads it before parsing."""
    from swamp.util.tracing import valid_traceparent

    if value is not None and not valid_traceparent(value):
        raise click.BadParameter("not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)", ctx, param)
    return value


def _remote_aware(f):
    """Run the command on a server when --server (or SWAMP_SERVE_URL) says
    so and the command registered a handler (cli/remote_handlers.py); the
    client, swamp.cli.remote, loads only then."""
    import functools
    import os

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        ctx = click.get_current_context()
        state = ctx.find_object(CliState)
        if (state is not None and (state.server or os.environ.get("SWAMP_SERVE_URL"))
                and not isinstance(ctx.command, click.Group)):
            from swamp.cli import remote  # the client (urllib): loaded only when a command may go remote

            url, explicit = remote.target(state)
            if remote.dispatch(ctx, state, kwargs, url, explicit) is not NotImplemented:
                return None
        return f(*args, **kwargs)

    return wrapper


class _RemoteOption(click.Option):
    """``--server`` and ``--token``: accepted by every command (a command
    that cannot run on a server refuses them, saying so), but shown in its
    ``--help`` only where they do something: the commands swamp.cli.remote
    runs on a server, and ``also`` (commands that read the option
    themselves)."""

    def __init__(self, *args, also: tuple[str, ...] = (), help_for: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.also = frozenset(also)
        #: command -> what the option means there, when not what it means for --server
        self.help_for = help_for or {}

    def get_help_record(self, ctx):
        if ctx is not None and not isinstance(ctx.command, click.Group):
            import swamp.cli.remote  # noqa: F401  (registers the handlers of its commands; only when help is shown)
            from swamp.cli.remote_handlers import HANDLERS, command_key

            key = command_key(ctx)
            if key not in HANDLERS and key not in self.also:
                return None
            record = super().get_help_record(ctx)
            return (record[0], self.help_for[key]) if record and key in self.help_for else record
        return super().get_help_record(ctx)


#: commands that never open a repository: --repo-dir and --offline change nothing for them
NO_REPOSITORY = frozenset({"completions", "datastore type search", "extension fmt", "extension new", "repo init",
                           "worker list", "worker queue", "worker verify", "workflow schema get"})


class _RepoOption(click.Option):
    """``--repo-dir`` and ``--offline``: accepted by every command, shown in
    ``--help`` only by those that open a repository."""

    def get_help_record(self, ctx):
        if ctx is not None and not isinstance(ctx.command, click.Group):
            names = []
            while ctx.parent is not None:
                names.append(ctx.info_name)
                ctx = ctx.parent
            if " ".join(reversed(names)) in NO_REPOSITORY:
                return None
        return super().get_help_record(ctx)


def _click_option(o: GlobalOption):
    """The click option of a row of swamp.cli.option_table."""
    kw: dict = {"expose_value": False, "help": o.help,
                "callback": _traceparent if o.field == "traceparent" else _set(o.field)}
    if o.field == "color":
        kw.update(flag_value=False, default=None)  # given: False; else unset (colour when a terminal)
    elif o.metavar is None:
        kw["is_flag"] = True
    elif o.field == "repo_dir":
        kw["type"] = click.Path(file_okay=False)  # whose metavar is the table's DIRECTORY
    else:
        kw["metavar"] = o.metavar
    if o.shown == "repo":
        kw["cls"] = _RepoOption
    elif o.shown == "remote":
        kw.update(cls=_RemoteOption, also=o.also, help_for=o.help_for)
    return click.option(*o.names, o.field, **kw)


def global_options(f):
    """The options of swamp.cli.option_table, on command ``f``."""
    f = _remote_aware(f)
    for o in reversed(GLOBAL_OPTIONS):
        f = _click_option(o)(f)
    return f
