"""The swamp a repository names (``swampVersion`` in .swamp.yaml) against
the one running: a repository that a newer swamp last upgraded may hold
files this one does not understand, so it is refused, with the upgrade
to make, rather than used silently (upstream refuses it the same way)."""

from __future__ import annotations

import re

from swamp import __version__
from swamp.errors import SwampError

#: the release part of a version: 1.2.3 of 1.2.3rc1, 1.2.3.dev4 or 1.2.3+local
_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)")


def _release(version: str) -> tuple[int, ...] | None:
    m = _RELEASE.match(version.strip())
    if not m:
        return None
    parts = [int(p) for p in m.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:  # 1.2 == 1.2.0
        parts.pop()
    return tuple(parts)


def is_newer(recorded: str, running: str) -> bool:
    """Whether ``recorded`` is a later release than ``running``. A version
    that is not numbers and dots is not judged (nothing to compare)."""
    a, b = _release(recorded), _release(running)
    return a is not None and b is not None and a > b


def refuse_newer(recorded: str, source: str) -> None:
    """Raise when the repository at ``source`` names a newer swamp than this one."""
    if is_newer(recorded, __version__):
        raise SwampError(
            f"{source} names swamp {recorded}, newer than this swamp ({__version__})",
            code="swamp_too_old",
            hint=f"upgrade swamp to {recorded} or later (pip install --upgrade 'swamp>={recorded}'), "
                 "then run the command again")
