"""What the global options said (`CliState`), without click: the click
commands get it from `swamp.cli.options` (which re-exports it), and the fast
lane (`swamp.cli.fast_lane`) builds one itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swamp.app.repository import Repo


class CliState:
    """What the global options said. A plain class: start-up time matters."""

    def __init__(self, *, json: bool = False, repo_dir: str | None = None, quiet: bool = False,
                 offline: bool = False, verbose: bool = False, color: bool = True,
                 server: str | None = None, token: str | None = None) -> None:
        self.json = json
        self.repo_dir = repo_dir
        self.quiet = quiet
        self.offline = offline
        self.verbose = verbose
        self.color = color
        #: run the command on this `swamp serve` (--server; SWAMP_SERVE_URL is read when it runs)
        self.server = server
        self.token = token

    def repo(self):
        from swamp.app.repository import open_repo
        from swamp.cli.logs import configure

        configure(json_mode=self.json)  # before anything that may log a warning
        return open_repo(self.repo_dir, offline=self.offline, on_config_read=_refresh_config)


def _refresh_config(repo: Repo) -> None:
    """Managed config: pull before the first read of the config tier."""
    from swamp.app.managed_config import refresh

    refresh(repo)

