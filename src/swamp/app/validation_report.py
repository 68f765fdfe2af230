"""The errors of one file in a validate report (`workflow validate`,
`model validate`): one a line, each naming its place in the file
(``jobs[0].steps[2].task: ...``), sorted by place, so a person reads them
in the file's order; and the same as ``{"path", "message"}`` pairs
(``problems``), so a script need not split the lines."""

from __future__ import annotations

import re

from swamp.errors import SchemaError, SwampError
from swamp.util.documents import place_key

#: "<place>: <message>": a place is one word (jobs[0].steps[1].task, a file
#: path), maybe followed by a step's name in brackets, as validation's messages say it
_PLACED = re.compile(r"(?P<path>[^\s:]+(?: \([^)]*\))?): (?P<message>.+)", re.S)


def errors_of(e: SwampError) -> list[str]:
    """The lines of a file that did not load: each schema error on its own
    (a did-you-mean for an unknown key beside it), else the error's message."""
    close = e.hint if e.hint and e.hint.startswith("did you mean") else None
    if isinstance(e, SchemaError) and e.problems:
        lines = [f"{p['path']}: {p['message']}" for p in e.problems]
        if close:
            at = next((i for i, p in enumerate(e.problems) if p["message"] == "unknown key"), 0)
            lines[at] += f" ({close})"
        return lines
    return [e.message + (f" ({close})" if close else "")]


def set_errors(entry: dict, errors: list[str]) -> None:
    """``entry``'s ``errors`` (sorted by place), ``problems`` and ``valid``."""
    placed = [(_split(line), line) for line in errors]
    placed.sort(key=lambda pair: (place_key(pair[0]["path"]), pair[1]))
    entry["errors"] = [line for _, line in placed]
    entry["problems"] = [problem for problem, _ in placed]
    entry["valid"] = not errors


def _split(line: str) -> dict:
    m = _PLACED.fullmatch(line)
    if m is None:
        return {"path": "", "message": line}
    return {"path": m["path"], "message": m["message"]}
