"""Options every command takes. They are accepted both before the command
(`swamp --json model get x`) and after it (`swamp model get x --json`)."""

from __future__ import annotations

import click


class CliState:
    """What the global options said. A plain class: start-up time matters."""

    def __init__(self, *, json: bool = False, repo_dir: str | None = None, quiet: bool = False,
                 offline: bool = False, verbose: bool = False, color: bool = True) -> None:
        self.json = json
        self.repo_dir = repo_dir
        self.quiet = quiet
        self.offline = offline
        self.verbose = verbose
        self.color = color

    def repo(self):
        from swamp.cli.logs import configure
        from swamp.repo.context import Repo

        configure(json_mode=self.json)  # before anything that may log a warning
        repo = Repo.open(self.repo_dir)
        repo.offline = self.offline
        return repo


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


def global_options(f):
    opts = [
        click.option("--json", "json_", is_flag=True, expose_value=False, callback=_set("json"),
                     help="One JSON document on stdout; errors as JSON on stderr."),
        click.option("--repo-dir", type=click.Path(file_okay=False), expose_value=False,
                     callback=_set("repo_dir"), help="Repository root (else SWAMP_REPO_DIR, else search upward)."),
        click.option("--offline", is_flag=True, expose_value=False, callback=_set("offline"),
                     help="Work from the local cache of a shared datastore: no pull, no push."),
        click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=_set("quiet"), help="Errors only."),
        click.option("-v", "--verbose", is_flag=True, expose_value=False, callback=_set("verbose"), help="More detail."),
        click.option("--no-color", "color", flag_value=False, default=None, expose_value=False,
                     callback=_set("color"), help="No colors."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f
