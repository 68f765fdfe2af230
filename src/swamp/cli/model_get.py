"""The body of `swamp model get`, without click: the click command
(swamp.cli.model) and the fast lane (swamp.cli.fast_lane) both call `run`."""

from __future__ import annotations

from swamp.cli.output import emit, say
from swamp.cli.state import CliState


def run(state: CliState, name: str) -> None:
    """Show the definition NAME (YAML, or --json)."""
    from swamp.app.model_definitions import get_model
    from swamp.util import yamlio

    result = get_model(state.repo(), name)
    emit(state, result, lambda: say(yamlio.dumps(result).rstrip()))
