"""The options every command takes, as one plain table: click's options
(``swamp.cli.options.global_options``), the help page printed without click
(``swamp.cli.fast_help``) and the flags the fast lane parses without click
(``swamp.cli.fast_lane``) are all made from it, so a new global option is
one row here. No click here: the fast paths import this module."""

from __future__ import annotations


class GlobalOption:
    """One global option. ``field``: the CliState attribute it sets;
    ``metavar``: the value it takes (None: a flag); ``shown``: where its
    ``--help`` lists it ("repo": commands that open a repository; "remote":
    commands that run on a server, and ``also``); ``fast``: the fast lane
    takes it (the others send a command line to click); ``help_for``: what it
    means for a command where it is not what ``help`` says."""

    __slots__ = ("names", "field", "help", "metavar", "shown", "also", "fast", "help_for")

    def __init__(self, names: tuple[str, ...], field: str, help: str, *, metavar: str | None = None,
                 shown: str = "always", also: tuple[str, ...] = (), fast: bool = True,
                 help_for: dict[str, str] | None = None) -> None:
        self.names = names
        self.field = field
        self.help = help
        self.metavar = metavar
        self.shown = shown
        self.also = also
        self.fast = fast
        self.help_for = help_for or {}

    @property
    def first_column(self) -> str:
        """How click's help lists it: its names, then its value's name."""
        names = ", ".join(self.names)
        return f"{names} {self.metavar}" if self.metavar else names


#: --token of `worker enrol|start`, which read it themselves (cli/worker_tokens.py)
_ENROL_TOKEN_HELP = ("The enrolment token 'swamp worker token create' printed ('-': read it from stdin; "
                     "else $SWAMP_WORKER_TOKEN).")

#: in the order click lists them (after --version, before -h/--help)
GLOBAL_OPTIONS: tuple[GlobalOption, ...] = (
    GlobalOption(("--json",), "json", "One JSON document on stdout; errors as JSON on stderr."),
    GlobalOption(("--repo-dir",), "repo_dir", "Repository root (else SWAMP_REPO_DIR, else search upward).",
                 metavar="DIRECTORY", shown="repo"),
    GlobalOption(("--offline",), "offline", "Work from the local cache of a shared datastore: no pull, no push.",
                 shown="repo"),
    GlobalOption(("-q", "--quiet"), "quiet", "Errors only."),
    GlobalOption(("-v", "--verbose"), "verbose", "More detail."),
    # sets CliState.color to False (the field's default, True, is "colour when a terminal")
    GlobalOption(("--no-color",), "color", "No colour, even on a terminal (as NO_COLOR set to anything)."),
    GlobalOption(("--server",), "server", "Run on this swamp serve (else SWAMP_SERVE_URL) where the command "
                 "supports it.", metavar="URL", shown="remote",
                 also=("auth server-login", "auth logout", "auth whoami"), fast=False),
    GlobalOption(("--token",), "token", "The token for --server (else SWAMP_SERVE_TOKEN).", metavar="TOKEN",
                 shown="remote", also=("access can-i", "access check", "auth server-login", "auth whoami",
                                       "worker enrol", "worker start"),
                 help_for=dict.fromkeys(("worker enrol", "worker start"), _ENROL_TOKEN_HELP), fast=False),
    GlobalOption(("--traceparent",), "traceparent", "Trace as a child of this W3C traceparent (else "
                 "TRACEPARENT); see swamp docs tracing.", metavar="W3C", fast=False),
)


def fast_flags() -> dict[str, str]:
    """The flags the fast lane takes: option name -> CliState field."""
    return {name: o.field for o in GLOBAL_OPTIONS if o.fast and o.metavar is None for name in o.names}
