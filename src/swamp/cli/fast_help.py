"""`swamp --help`, `swamp -h`, a bare `swamp` and `swamp --version` without
importing click (about 20 ms of a 30 ms start-up).

The page is laid out here by the same rules click's help formatter follows
(usage line, the summary indented by 2, then "Options:" and "Commands:" as
two-column lists whose second column wraps), from two tables: the global
options below and the groups in `swamp.cli.main.GROUPS`.
`tests/unit/test_fast_help.py` compares the page with click's own rendering
at several widths, so the two cannot drift apart; the global options come
from `swamp.cli.option_table`, as click's own do, so a new one is one row
there.

Only plain text is handled: a help text whose words carry an inner hyphen
(textwrap may break a line after it), several spaces in a row, or a word too
long for its column makes `render` return None, and the caller goes through
click as before."""

from __future__ import annotations

import os
import sys

from swamp.cli.option_table import GLOBAL_OPTIONS

USAGE = "[OPTIONS] COMMAND [ARGS]..."
SUMMARY = "swamp: reviewable, repeatable automation for people and AI agents."

#: the top-level options in the order click lists them: --version, the
#: global options (swamp.cli.option_table, which click's are made from), then -h/--help
OPTIONS: tuple[tuple[str, str], ...] = (
    ("--version", "Show the version and exit."),
    *((o.first_column, o.help) for o in GLOBAL_OPTIONS),
    ("-h, --help", "Show this message and exit."),
)

#: the widest first column a two-column list gives room to, and the gap after it
_FIRST_COLUMN_MAX = 30
_GAP = 2
_INDENT = 2


def terminal_width() -> int:
    """The help width click is given (``terminal_width`` of the root
    context): $COLUMNS or the terminal's width, capped at 80, less a margin
    of 2, and never under 50. Without importing shutil for it (2 ms)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


class _NotPlain(Exception):
    """A text this module does not lay out itself (click does)."""


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """Greedy word wrap of one paragraph of single-spaced words: as many
    words on a line as fit in `width` columns, indents included."""
    words = text.split(" ")
    for word in words:
        if not word or "\t" in word or "\n" in word or "-" in word.lstrip("-"):
            raise _NotPlain(text)
    lines: list[str] = []
    line = first
    indent = first
    for word in words:
        if len(indent) + len(word) > width:
            raise _NotPlain(text)  # textwrap would break the word itself
        if line == indent:
            line += word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            indent = rest
            line = rest + word
    lines.append(line)
    return lines


def _two_columns(rows, width: int, indent: int) -> list[str]:
    first_col = min(max(len(name) for name, _ in rows), _FIRST_COLUMN_MAX) + _GAP
    text_width = max(width - first_col - 2, 10)
    out = []
    for name, text in rows:
        head = " " * indent + name
        if not text:
            out.append(head)
            continue
        lines = _wrap(text, text_width)
        if len(name) <= first_col - _GAP:
            out.append(head + " " * (first_col - len(name)) + lines[0])
        else:
            out.append(head)
            out.append(" " * (first_col + indent) + lines[0])
        out.extend(" " * (first_col + indent) + line for line in lines[1:])
    return out


def render(groups: dict, width: int | None = None) -> str | None:
    """The top-level help page as click prints it (without the final
    newline), or None when a text is not plain enough to lay out here."""
    width = terminal_width() if width is None else width
    try:
        prefix = "Usage: swamp "
        out = _wrap(USAGE, width, prefix, " " * len(prefix))
        out.append("")
        out.extend(_wrap(SUMMARY, width, " " * _INDENT, " " * _INDENT))
        out.append("")
        out.append("Options:")
        out.extend(_two_columns(OPTIONS, width, _INDENT))
        out.append("")
        out.append("Commands:")
        out.extend(_two_columns([(name, groups[name][2]) for name in sorted(groups)], width, _INDENT))
    except _NotPlain:
        return None
    return "\n".join(out)


def try_print(args: list, groups: dict) -> int | None:
    """Print the top-level help (or the version) when `args` asks for
    exactly that, and return the exit code click would: 0 for
    ``--help``/``-h`` and ``--version`` on stdout, 2 for no arguments at all
    (on stderr). None: click handles it."""
    if args == ["--version"]:
        from swamp import __version__

        page = f"swamp {__version__}"  # click.version_option's message in swamp.cli.main
    elif args and (len(args) != 1 or args[0] not in ("--help", "-h")):
        return None
    else:
        page = render(groups)
    if page is None:
        return None
    stream = sys.stdout if args else sys.stderr
    try:
        stream.write(page + "\n")
        stream.flush()
    except BrokenPipeError:
        return 1
    return 0 if args else 2
