"""Which commands run on a `swamp serve` server with ``--server`` (or
SWAMP_SERVE_URL), and the handler that runs each there. A command's module
registers its own handler as it is loaded (``@runs_on_server(KEY,
PARAMETERS)``), so this table imports nothing: `cli/options.py` asks it
before any command runs, and the client (`cli/remote.py`, plain urllib)
loads only when a command goes to a server."""

from __future__ import annotations

from typing import Any, Callable

Handler = Callable[[Any, Any, dict], None]  # (client, CLI state, the command's parameters)

#: command ("workflow run") -> (handler, the command's parameters it understands)
HANDLERS: dict[str, tuple[Handler, frozenset[str]]] = {}

#: commands that read --server and --token themselves (cli/auth.py)
SELF_SERVED = frozenset({"auth server-login", "auth logout", "auth whoami"})

#: commands that go to a server only when --server says so, never because SWAMP_SERVE_URL is set: a
#: shell that exports it to run workflows there still administers access on its checkout
_EXPLICIT_ONLY_PREFIXES = ("access grant ", "access group ", "access check")


def runs_on_server(key: str, parameters: set[str] | frozenset[str] = frozenset()):
    """Register the decorated function as how command ``key`` runs on a
    server; ``parameters``: the command's parameters it passes on (any
    other one given is refused as not available with --server)."""
    def register(handler: Handler) -> Handler:
        HANDLERS[key] = (handler, frozenset(parameters))
        return handler

    return register


def explicit_only(key: str) -> bool:
    return key in HANDLERS and key.startswith(_EXPLICIT_ONLY_PREFIXES)


def command_key(ctx) -> str:
    """The command a click context runs, as HANDLERS names it ("workflow run")."""
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(reversed(names))


def every_handler(ctx) -> dict[str, tuple[Handler, frozenset[str]]]:
    """HANDLERS with every command loaded (and so registered): for the
    message that lists them, which a command refused with --server prints."""
    import click

    def load(group, parent) -> None:
        for name in group.list_commands(parent):
            command = group.get_command(parent, name)
            if isinstance(command, click.Group):
                load(command, click.Context(command, info_name=name, parent=parent))

    root = ctx.find_root()
    load(root.command, root)
    return HANDLERS
