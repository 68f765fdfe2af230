"""One problem a check found in a document: its place in the document
(``jobs[0].steps[2].task``, ``globalArguments.run``; "" for the document
as a whole) and what is wrong there. The checks (workflows/validation.py,
models/definition_checks.py) return these, so a report lists the place and
the message as they were found, never by splitting a line of text back
apart (a key or a message may hold ": " or brackets)."""

from __future__ import annotations

from swamp.util.plain import Frozen


class Problem(Frozen):
    __slots__ = ("path", "message")

    def __init__(self, path: str, message: str):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "message", message)

    def __str__(self) -> str:
        """The line a person reads: ``<place>: <message>``."""
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_json(self) -> dict:
        return {"path": self.path, "message": self.message}


def joined(problems: list[Problem]) -> str:
    """Every problem on one line, for an error's message."""
    return "; ".join(str(p) for p in problems)
