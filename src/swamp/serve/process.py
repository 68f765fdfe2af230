"""The server process as the command line starts it. ``swamp serve``
becomes this process (as ``swamp worker start`` becomes the worker's), and
``swamp serve daemon enable`` checks its options the way that process will
parse them. This is the one module of serve/ the CLI imports
(tests/unit/test_layering.py, PROCESS_ENTRY_POINTS); what the CLI checks
before the start needs no serve extra, so only ``server()`` loads
starlette and uvicorn."""

from __future__ import annotations

from swamp.serve.announce import check_targets  # a --schedule or --webhook naming no workflow
from swamp.serve.runner import check_exposure  # --auth-mode none only on loopback, or with --insecure
from swamp.serve.scheduler import parse as parse_schedule  # NAME=WORKFLOW@CRON
from swamp.serve.webhooks import parse as parse_webhook, secret_variable  # NAME=WORKFLOW[:INPUT]

__all__ = ["check_exposure", "check_targets", "parse_schedule", "parse_webhook", "secret_variable", "server"]


def server():
    """(Settings, run): a server's settings and its start under uvicorn.
    Raises ImportError when the serve extra is not installed."""
    from swamp.serve.runner import serve as run
    from swamp.serve.state import Settings

    return Settings, run
