"""Extension names and version specs: ``NAME`` or ``NAME==VERSION``.

An extension is a Python distribution, so its name follows the package
index's rules; it is kept normalized (PEP 503: lowercase, runs of ``-_.``
become ``-``) so that ``Acme_Tools`` and ``acme-tools`` are one entry."""

from __future__ import annotations

import re

from swamp.errors import UsageError

_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_name(name: str) -> str:
    if not _NAME_RE.match(name or ""):
        raise UsageError(f"invalid extension name {name!r}",
                         hint="a package name: letters, digits, '-', '_' and '.', starting and ending "
                              "with a letter or digit")
    return normalize(name)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME==VERSION`` -> (normalized name, version or None)."""
    name, sep, version = spec.partition("==")
    name = check_name(name.strip())
    if not sep:
        return name, None
    version = version.strip()
    if not _VERSION_RE.match(version):
        raise UsageError(f"invalid version in {spec!r}", hint="write NAME==VERSION, such as acme-tools==1.2.0")
    return name, version


def module_name(name: str) -> str:
    """The import name the scaffold gives a distribution name."""
    return normalize(name).replace("-", "_")
