"""Spotting a value pasted into a shell command: `run: echo ${{ inputs.x }}`
makes whatever the value holds (`$(...)`, `;`, a quote) part of the
command. `model validate` and `workflow validate` warn of it (a warning,
not an error: the author may know the value is safe), pointing at the two
safe ways, `env:` and `shell.quote()` (docs/expressions.md)."""

from __future__ import annotations

import re
from typing import Any

from swamp.expr.template import TemplateSyntaxError, parse

#: an expression reading a value the author does not control: an input, data, a forEach item
_VALUE = re.compile(r"(?<![\w.])(inputs|data|self|steps|model)\b")
_QUOTED = re.compile(r"^\s*shell\s*\.\s*quote\s*\(")


def pasted_values(run: Any) -> list[str]:
    """The expressions of a shell ``run`` text that paste a value into the
    command unquoted (in order, without repeats)."""
    if not isinstance(run, str) or "${{" not in run:
        return []
    try:
        segments = parse(run)
    except TemplateSyntaxError:
        return []  # reported as an error by the expression checks
    found: list[str] = []
    for seg in segments:
        if isinstance(seg, str) or _QUOTED.match(seg.text) or not _VALUE.search(seg.text):
            continue
        if seg.text not in found:
            found.append(seg.text)
    return found


def warning(field: str, run: Any) -> str | None:
    """The warning for a shell ``run`` at ``field``, or None."""
    found = pasted_values(run)
    if not found:
        return None
    shown = ", ".join(f"${{{{ {t} }}}}" for t in found)
    return (f"{field}: {shown} pastes a value into the shell command, where it runs as shell code if it holds "
            "$(...), ; or quotes; pass it in env: and read \"$NAME\", or use ${{ shell.quote(...) }} "
            "(swamp docs expressions#inputs-that-reach-a-shell)")
