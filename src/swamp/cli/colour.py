"""Colour for a person at a terminal, and nowhere else.

Colour is on for a stream only when all of these hold: the stream is a
terminal, ``--no-color`` was not given, ``NO_COLOR`` is not set (to any
value, empty included), ``TERM`` is not ``dumb``, and the command is neither
in ``--json`` nor in quiet mode. So a pipe, a file, a script reading
``--json`` and a CI log never see an escape code.

Text is painted by role, never by colour name, so the same thing looks the
same everywhere:

====================  ============================================
role                  used for
====================  ============================================
``good``  (green)     succeeded, ok, valid; a diff's added lines
``bad``   (red)       failed, INVALID, ``error:``; removed lines
``wait``  (yellow)    cancelled, suspended, waiting, ``warning:``
``busy``  (cyan)      running; a diff's ``@@`` hunk headers
``dim``               ``hint:``
====================  ============================================

Painting never changes a text's width as a person sees it: pad first, then
paint (``output.table`` does), so coloured columns stay aligned.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

_CODES = {"good": "32", "bad": "31", "wait": "33", "busy": "36", "dim": "2", "bold": "1"}
RESET = "\x1b[0m"

#: status words (of runs, steps, checks) and the role each is painted in
STATUS_ROLES = {
    "succeeded": "good", "success": "good", "ok": "good", "valid": "good", "passed": "good",
    "failed": "bad", "failure": "bad", "error": "bad", "invalid": "bad", "fail": "bad", "interrupted": "bad",
    "cancelled": "wait", "suspended": "wait", "waiting": "wait", "skipped": "wait", "warn": "wait",
    "pending": "wait",
    "running": "busy",
}

#: a line's leading label and its role
PREFIX_ROLES = {"error:": "bad", "warning:": "wait", "hint:": "dim"}

#: the words of a run's state, painted wherever a one-line message says them
RUN_STATES = ("succeeded", "failed", "cancelled", "interrupted", "suspended", "waiting", "running")

_STATUS_WORD = re.compile(r"(?<![\w./-])(" + "|".join(RUN_STATES) + r")(?![\w./-])")
_PREFIX = re.compile(r"^(\s*)(error:|warning:|hint:)")


#: the CliState of the command the fast lane runs (a click command's is its context's object)
_lane_state = None


def use_state(state) -> None:
    """The CliState of the command running without click (None: none)."""
    global _lane_state
    _lane_state = state


def _state():
    """The running command's CliState: a click command's (its context's
    object), else the one the fast lane runs (`use_state`)."""
    if "click" in sys.modules:  # never imported here: the fast lane runs without click
        import click

        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            state = ctx.find_root().obj  # the CliState (not imported: options imports this module's users)
            return state if hasattr(state, "color") else None
    return _lane_state


def enabled(stream: TextIO | None = None, state=None) -> bool:
    """Whether text written to ``stream`` (default stdout) may be coloured.
    ``state`` is the command's CliState (default: the running command's)."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    if state is None:
        state = _state()
    if state is not None and (state.json or state.quiet or state.color is False):
        return False
    stream = stream if stream is not None else sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def paint(text: str, role: str | None, on: bool = True) -> str:
    """``text`` in the colour of ``role`` (unchanged when ``on`` is false,
    ``role`` is None or ``text`` is empty)."""
    if not on or not role or not text or role not in _CODES:
        return text
    return f"\x1b[{_CODES[role]}m{text}{RESET}"


def status_role(word) -> str | None:
    """The role of a status word (any case), or None for any other value."""
    if not isinstance(word, str):
        return None
    return STATUS_ROLES.get(word.strip().lower())


def status(word: str, on: bool = True) -> str:
    """A status word, painted by what it means."""
    return paint(word, status_role(word), on)


def line(text: str, on: bool = True) -> str:
    """One line of a person's output: its leading ``error:``, ``warning:``
    or ``hint:`` label painted, and, in a one-line message (a run's summary,
    ``workflow deploy: run 3f2a succeeded``), its status words."""
    if not on or not text:
        return text
    text = _PREFIX.sub(lambda m: m.group(1) + paint(m.group(2), PREFIX_ROLES[m.group(2)]), text, count=1)
    if "\n" not in text:
        text = _STATUS_WORD.sub(lambda m: m.group(1) if _counts_none(text, m.start()) else status(m.group(1)), text)
    return text


def _counts_none(text: str, at: int) -> bool:
    """``0 failed``: a count of nothing is not worth a colour."""
    before = text[:at]
    return before.endswith("0 ") and (len(before) == 2 or not before[-3].isdigit())


def diff(text: str, on: bool = True) -> str:
    """A unified diff with its added lines green, removed lines red and hunk
    headers cyan."""
    if not on:
        return text
    out = []
    for ln in text.split("\n"):
        if ln.startswith(("+++", "---")):
            out.append(paint(ln, "bold"))
        elif ln.startswith("+"):
            out.append(paint(ln, "good"))
        elif ln.startswith("-"):
            out.append(paint(ln, "bad"))
        elif ln.startswith("@@"):
            out.append(paint(ln, "busy"))
        else:
            out.append(ln)
    return "\n".join(out)
