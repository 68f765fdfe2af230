"""Where the warnings that domain code logs (``logging.getLogger("swamp...")``)
go: one ``warning: ...`` line each on stderr for a person; nowhere in
--json mode, where stderr holds exactly one JSON error document or nothing.
Without this, Python's last-resort handler would print them raw."""

from __future__ import annotations

import logging
import sys


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.json = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.json:
            return
        try:
            from swamp.vault.redact import redact_text

            from swamp.cli import colour

            label = colour.paint("warning:", "wait", colour.enabled(sys.stderr))
            sys.stderr.write(label + " " + redact_text(record.getMessage()) + "\n")
        except Exception:  # a warning must never break the command
            self.handleError(record)


def configure(*, json_mode: bool) -> None:
    """Idempotent: one handler on the ``swamp`` logger, told the mode."""
    log = logging.getLogger("swamp")
    handler = next((h for h in log.handlers if isinstance(h, _Warnings)), None)
    if handler is None:
        handler = _Warnings()
        log.addHandler(handler)
    handler.json = json_mode
