"""The `swamp` command. Subcommand groups are imported only when invoked, and
`swamp --help` (or `-h`, or no arguments) is printed by
`swamp.cli.fast_help` without importing click at all, so it stays close to
bare Python start-up. Then `swamp.cli.fast_lane` runs `data get` and
`model method run` in their usual forms without click either (the same
command bodies, the same error rendering); everything else, and any form
the lane does not take, goes to click. The click group, `cli`, is built on
first use: the module's `__getattr__` builds it for
`from swamp.cli.main import cli`."""

from __future__ import annotations

import sys

from swamp.cli.fast_help import SUMMARY

GROUPS = {
    "repo": ("swamp.cli.repo", "repo", "Create and upgrade repositories"),
    "init": ("swamp.cli.repo", "init", "Create a repository here or at PATH (the same as 'repo init')"),
    "model": ("swamp.cli.model", "model", "Model types, definitions and method runs"),
    "data": ("swamp.cli.data", "data", "Versioned data written by methods"),
    "workflow": ("swamp.cli.workflow", "workflow", "Chain methods in jobs and steps"),
    "vault": ("swamp.cli.vault", "vault", "Secrets, injected late and never written in clear"),
    "datastore": ("swamp.cli.datastore", "datastore", "Where runtime state lives, and sharing it"),
    "config": ("swamp.cli.config", "config", "Settings shared by everyone using this datastore"),
    "extension": ("swamp.cli.extension", "extension", "Model types from Python packages, pinned for the team"),
    "serve": ("swamp.cli.serve", "serve", "Serve the use cases as an HTTP API"),
    "access": ("swamp.cli.access", "access", "Tokens, grants and groups for swamp serve"),
    "auth": ("swamp.cli.auth", "auth", "Tokens kept for each swamp serve URL: login, logout, whoami"),
    "worker": ("swamp.cli.worker", "worker", "Workers that run placed workflow steps, on Dask"),
    "doctor": ("swamp.cli.doctor", "doctor", "Check the repository, datastore and installation; --repair"),
    "run": ("swamp.cli.run", "run", "Method and workflow runs together: history, gc, doctor"),
    "summarise": ("swamp.cli.summarise", "summarise", "What the repository did lately: runs, failures, data, who"),
    "summarize": ("swamp.cli.summarise", "summarize", "The same as 'summarise'"),
    "report": ("swamp.cli.report", "report", "Reports that runs write, and their types"),
    "completions": ("swamp.cli.completions", "completions", "Shell completion scripts: bash, zsh, fish"),
    "agent": ("swamp.cli.agent", "agent", "Instructions for coding agents: AGENTS.md, CLAUDE.md, ..."),
    "docs": ("swamp.cli.docs", "docs", "The documentation, shipped with swamp: a topic, or the list of topics"),
}


def _build():
    """The root click group and its LazyGroup class (click is imported here)."""
    import importlib

    import click

    from swamp import __version__
    from swamp.cli.fast_help import terminal_width
    from swamp.cli.options import CliState, global_options

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

    @click.group(cls=LazyGroup, help=SUMMARY,
                 context_settings={"help_option_names": ["-h", "--help"], "terminal_width": terminal_width()})
    # The version the package declares (swamp.__version__), not a scan of the
    # installed packages' metadata for it (importlib.metadata: ~40 ms).
    @click.version_option(version=__version__, prog_name="swamp", message="%(prog)s %(version)s")
    @global_options
    @click.pass_context
    def cli(ctx):
        ctx.ensure_object(CliState)

    return {"cli": cli, "LazyGroup": LazyGroup}


def __getattr__(name: str):
    """`cli` and `LazyGroup`, built (and click imported) on first use."""
    if name not in ("cli", "LazyGroup"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in globals():
        return globals()[name]
    built = _build()
    globals().update(built)
    return built[name]

def main(argv=None) -> None:
    import os

    from swamp.util.file_modes import restrict_umask

    restrict_umask()  # first: nothing this command (serve, a worker, a step) writes is writable by others
    args = sys.argv[1:] if argv is None else argv
    tracing = any(k.startswith("OTEL_") for k in os.environ) or any(str(a).startswith("--traceparent") for a in args)
    completing = "_SWAMP_COMPLETE" in os.environ  # the shell asks for completions (swamp completions)
    if not tracing and not completing and "SWAMP_NO_FAST_LANE" not in os.environ:  # that: click for all
        from swamp.cli.fast_help import try_print

        code = try_print(list(args), GROUPS)  # `swamp --help`, `-h` or nothing: no click
        if code is not None:
            sys.exit(code)
        from swamp.cli.fast_lane import try_run

        code = try_run(list(args))  # `data get`, `model method run` in their usual forms: no click
        if code is not None:
            sys.exit(code)
    from swamp.cli.errors import run_cli

    cli = __getattr__("cli")
    if completing:
        from swamp.cli.completions import attach

        attach(cli)
    if not tracing:
        sys.exit(run_cli(cli, argv))  # no tracing asked for: swamp.util.tracing is not even imported
    from swamp.util.tracing import run_command

    sys.exit(run_command(cli, argv, run_cli))  # in a span when OTEL_* turns tracing on (docs/tracing.md)


if __name__ == "__main__":
    main()
