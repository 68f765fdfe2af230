"""The one value type a front hands down to say "a person typed this":
``CliString``, a value given as KEY=VALUE (on the command line, or in a
form field), which the domain coerces to the declared type where there is
one and keeps as a string where there is none (models/inputs.py)."""

from __future__ import annotations


class CliString(str):
    """A value typed as KEY=VALUE on the command line: coerced to the
    schema's type where there is one, a string where there is none."""
