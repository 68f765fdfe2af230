"""The environment a step's processes get: a small safe base from this
process's environment, plus what the definition asks for, never the rest
(serve's webhook secrets, AWS keys, SWAMP_* tokens, whatever the server or
the CLI was started with).

command/shell builds its command's environment from ``for_step`` (with its
``inheritEnv`` and ``env`` arguments); any other method that starts a
process without an ``env=`` of its own gets the base (the runner sets it on
the run's processes.Control, and util/processes hands it to Popen)."""

from __future__ import annotations

import os
from typing import Iterable, Mapping

from swamp.errors import ValidationError

#: passed on when set: what a program needs to find things, speak the
#: user's language and tell the time, and the trace a step's spans join
BASE_NAMES = ("HOME", "LANG", "LANGUAGE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TRACEPARENT",
              "TRACESTATE", "TZ", "USER")
BASE_PREFIXES = ("LC_",)


def base(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items() if k in BASE_NAMES or k.startswith(BASE_PREFIXES)}


def for_step(inherit: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The base plus each variable named in ``inherit`` that is set (a
    definition's ``inheritEnv``): passed through as it is."""
    environ = os.environ if environ is None else environ
    env = base(environ)
    for name in check_names(inherit):
        if name in environ:
            env[name] = environ[name]
    return env


def check_names(names: Iterable[str]) -> list[str]:
    out = []
    for name in names:
        # [A-Za-z_][A-Za-z0-9_]*: an identifier, in ASCII
        if not isinstance(name, str) or not (name.isascii() and name.isidentifier()):
            raise ValidationError(f"inheritEnv: {name!r} is not an environment variable name",
                                  hint="names are letters, digits and _, not starting with a digit")
        out.append(name)
    return out
