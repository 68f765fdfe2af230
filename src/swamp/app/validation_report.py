"""The errors of one file in a validate report (`workflow validate`,
`model validate`): one a line, each naming its place in the file
(``jobs[0].steps[2].task: ...``), sorted by place, so a person reads them
in the file's order; and the same as ``{"path", "message"}`` pairs
(``problems``), so a script need not split the lines. Both are made from
the checks' Problems (util/problems.py), never by parsing the lines."""

from __future__ import annotations

from swamp.errors import SchemaError, SwampError
from swamp.util.documents import place_key
from swamp.util.problems import Problem


def errors_of(e: SwampError, *files: str) -> list[Problem]:
    """The problems of a file that did not load: each schema error on its
    own (a did-you-mean for an unknown key beside it), else the error as a
    whole, placed at the file when its message starts by naming one of
    ``files`` (the names the loaders give it)."""
    close = e.hint if e.hint and e.hint.startswith("did you mean") else None
    if isinstance(e, SchemaError) and e.problems:
        problems = [Problem(p["path"], p["message"]) for p in e.problems]
        if close:
            at = next((i for i, p in enumerate(e.problems) if p["message"] == "unknown key"), 0)
            problems[at] = Problem(problems[at].path, f"{problems[at].message} ({close})")
        return problems
    message = e.message + (f" ({close})" if close else "")
    for f in files:
        if f and message.startswith(f"{f}: "):
            return [Problem(f, message[len(f) + 2:])]
    return [Problem("", message)]


def set_errors(entry: dict, problems: list[Problem]) -> None:
    """``entry``'s ``errors`` (the lines, sorted by place), ``problems``
    (the same as pairs) and ``valid``."""
    placed = sorted(problems, key=lambda p: (place_key(p.path), str(p)))
    entry["errors"] = [str(p) for p in placed]
    entry["problems"] = [p.to_json() for p in placed]
    entry["valid"] = not problems
