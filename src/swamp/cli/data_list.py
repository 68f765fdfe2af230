"""The body of `swamp data list`, without click: the click command
(swamp.cli.data) and the fast lane (swamp.cli.fast_lane) both call `run`."""

from __future__ import annotations

from swamp.cli.output import emit, table
from swamp.cli.state import CliState


def run(state: CliState, model: str | None = None) -> None:
    """Data names with their latest version (of MODEL, or of every model)."""
    from swamp.app import data as app_data

    rows = app_data.list_names(state.repo(), model)
    emit(state, rows, lambda: table(rows, ["model", "name", "latestVersion", "versions", "kind", "updatedAt"]))
