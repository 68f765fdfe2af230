"""Comparing versions the way package indexes do (PEP 440). ``packaging``
is pip's own dependency and comes with it; swamp needs pip to resolve an
extension's dependencies anyway."""

from __future__ import annotations

from swamp.errors import ExtensionError


def _version_cls():
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:
        try:
            from pip._vendor.packaging.version import InvalidVersion, Version
        except ImportError:
            raise ExtensionError("comparing versions needs the 'packaging' module (or pip)",
                                 hint="install pip into swamp's environment") from None
    return Version, InvalidVersion


def latest(versions, *, pre: bool = False) -> str | None:
    """The newest version (final releases only unless ``pre``, or when
    there are only pre-releases)."""
    Version, Invalid = _version_cls()
    parsed = []
    for v in set(versions):
        try:
            parsed.append((Version(v), v))
        except Invalid:
            continue
    finals = [p for p in parsed if not p[0].is_prerelease]
    pool = parsed if pre or not finals else finals
    return max(pool)[1] if pool else None


def newer(a: str, b: str) -> bool:
    """Whether version ``a`` is newer than ``b``."""
    Version, Invalid = _version_cls()
    try:
        return Version(a) > Version(b)
    except Invalid:
        return False
