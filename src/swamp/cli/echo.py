"""`echo`: one line (or text) on stdout or stderr, as `click.echo` writes it,
without importing click.

Under a click command (click is imported) this is `click.echo` itself. The
fast lane (`swamp.cli.fast_lane`) runs without click, and takes a command
only when stdout and stderr are ordinary text streams whose encoding is not
ASCII (`plain_streams`): for those, `click.echo` writes the text to the
stream unchanged, with ANSI escape sequences removed unless the stream is a
terminal, and flushes; so does `echo` here."""

from __future__ import annotations

import re
import sys

#: click's own pattern of an ANSI escape sequence (click._compat._ansi_re)
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")


def echo(message: str = "", *, err: bool = False, nl: bool = True) -> None:
    if "click" in sys.modules:
        import click

        click.echo(message, err=err, nl=nl)
        return
    write(sys.stderr if err else sys.stdout, message, nl=nl)


def write(stream, message: str, *, nl: bool = True) -> None:
    """``message`` on ``stream`` as click.echo(message, file=stream) writes
    it to a text stream (tests/unit/test_fast_lane.py compares the two)."""
    out = message + "\n" if nl else message
    if not out:
        stream.flush()
        return
    if not _isatty(stream) and not type(stream).__module__.startswith("ipykernel."):
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except Exception:
        return False


def plain_streams() -> bool:
    """Whether stdout and stderr are streams that click.echo writes to as
    they are (text streams of the io module, in an encoding other than ASCII), so that
    `echo` above writes exactly what it would."""
    import codecs
    import io

    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper):
            return False
        try:
            if codecs.lookup(stream.encoding).name == "ascii":
                return False
        except LookupError:
            return False
    return True
