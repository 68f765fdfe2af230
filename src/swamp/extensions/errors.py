"""Which hint an extension that failed to load shows (its errors are in
swamp/errors.py)."""

from __future__ import annotations

from swamp.errors import HashMismatchError, SwampError, TamperedInstallError


#: refusals about what the code IS (not whether it works): their own hint is
#: the one to show, never "update the extension", which would pin what was refused
INTEGRITY_CODES = frozenset({HashMismatchError.code, TamperedInstallError.code})


def failure_hint(e: SwampError | None) -> str:
    """The hint for an extension that failed to load because of ``e``."""
    if e is not None and e.code in INTEGRITY_CODES and e.hint:
        return e.hint
    return "fix or update the extension ('swamp extension update NAME')"
