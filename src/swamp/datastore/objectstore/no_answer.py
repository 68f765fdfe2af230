"""A request the server did not answer: no connection, or no first byte,
within its timeout (``connect_timeout_s`` / ``response_timeout_s``). It is a
TransientError with a code of its own, which retry.py retries a few times
only, since each try costs the whole timeout."""

from __future__ import annotations

from .base import TransientError

NO_ANSWER = "no_answer"


def no_answer(message: str, hint: str | None = None) -> TransientError:
    return TransientError(message, hint=hint, code=NO_ANSWER)
