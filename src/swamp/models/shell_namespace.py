"""The `shell` namespace of expressions: `shell.quote(text)` is ``text`` as
one POSIX shell word, whatever it holds (quotes, `$( )`, newlines), for a
definition whose `run:` must name a value it does not control. The other
safe way, which needs no quoting, is the definition's `env:` (the shell
then reads "$NAME"): see docs/expressions.md."""

from __future__ import annotations

from swamp.expr import Function, Namespace


def quote(_provider, text: str) -> str:
    # Single quotes keep everything literal but a single quote, which is
    # closed, escaped and reopened: 'it'\''s'. The empty string is ''.
    return "'" + text.replace("'", "'\\''") + "'"


NAMESPACE = Namespace("shell", (Function("quote", ("string",), quote, returns="string",
                                         usage="shell.quote(text)"),))
