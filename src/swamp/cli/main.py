"""The `swamp` command. Subcommand groups are imported only when invoked, so
`swamp --help` stays close to bare Python start-up."""

from __future__ import annotations

import importlib
import sys

import click

from swamp import __version__
from swamp.cli.options import CliState, global_options

GROUPS = {
    "repo": ("swamp.cli.repo", "repo", "Create and upgrade repositories"),
    "model": ("swamp.cli.model", "model", "Model types, definitions and method runs"),
    "data": ("swamp.cli.data", "data", "Versioned data written by methods"),
    "workflow": ("swamp.cli.workflow", "workflow", "Chain methods in jobs and steps"),
    "vault": ("swamp.cli.vault", "vault", "Secrets, injected late and never written in clear"),
    "datastore": ("swamp.cli.datastore", "datastore", "Where runtime state lives, and sharing it"),
    "config": ("swamp.cli.config", "config", "Settings shared by everyone using this datastore"),
    "extension": ("swamp.cli.extension", "extension", "Model types from Python packages, pinned for the team"),
    "serve": ("swamp.cli.serve", "serve", "Serve the use cases as an HTTP API"),
    "access": ("swamp.cli.access", "access", "Tokens and grants for swamp serve"),
    "worker": ("swamp.cli.worker", "worker", "Workers that run placed workflow steps, on Dask"),
    "doctor": ("swamp.cli.doctor", "doctor", "Check the repository, datastore and installation; --repair"),
    "run": ("swamp.cli.run", "run", "Method and workflow runs together: history, gc, doctor"),
    "report": ("swamp.cli.report", "report", "Reports that runs write, and their types"),
    "completions": ("swamp.cli.completions", "completions", "Shell completion scripts: bash, zsh, fish"),
    "agent": ("swamp.cli.agent", "agent", "Instructions for coding agents: AGENTS.md, CLAUDE.md, ..."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(GROUPS)

    def get_command(self, ctx, name):
        spec = GROUPS.get(name)
        if spec is None:
            return None
        module = importlib.import_module(spec[0])
        return getattr(module, spec[1])

    def format_commands(self, ctx, formatter):
        # Short help from the table, without importing every group.
        rows = [(name, GROUPS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _terminal_width() -> int:
    """The help width click would pick, without importing shutil for it
    (2 ms of start-up): $COLUMNS or the terminal's width, capped at 80, less
    a margin of 2, and never under 50."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"],
                                              "terminal_width": _terminal_width()})
# The version the package declares (swamp.__version__), not a scan of the
# installed packages' metadata for it (importlib.metadata: ~40 ms).
@click.version_option(version=__version__, prog_name="swamp", message="%(prog)s %(version)s")
@global_options
@click.pass_context
def cli(ctx):
    """swamp: reviewable, repeatable automation for people and AI agents."""
    ctx.ensure_object(CliState)


def main(argv=None) -> None:
    import os

    from swamp.cli.errors import run_cli

    if "_SWAMP_COMPLETE" in os.environ:  # the shell asks for completions (swamp completions)
        from swamp.cli.completions import attach

        attach(cli)
    args = sys.argv[1:] if argv is None else argv
    if not any(k.startswith("OTEL_") for k in os.environ) and not any(str(a).startswith("--traceparent") for a in args):
        sys.exit(run_cli(cli, argv))  # no tracing asked for: swamp.util.tracing is not even imported
    from swamp.util.tracing import run_command

    sys.exit(run_command(cli, argv, run_cli))  # in a span when OTEL_* turns tracing on (docs/tracing.md)


if __name__ == "__main__":
    main()
