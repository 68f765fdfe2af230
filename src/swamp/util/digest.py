"""SHA-256 of bytes already in memory, without importing hashlib for a
small input: hashlib loads OpenSSL (about 2 ms of a command's start), while
CPython's own SHA-256 module loads at once and gives the same digest. A
large input goes to hashlib, whose OpenSSL code is the faster one."""

from __future__ import annotations

from typing import Any, Callable

#: up to this size the builtin module hashes; above it, hashlib (OpenSSL)
SMALL = 1 << 20

_builtin: Callable[[bytes], Any] | None = None


def _small_hasher() -> Callable[[bytes], Any]:
    global _builtin
    if _builtin is None:
        try:
            from _sha256 import sha256  # CPython 3.11
        except ImportError:
            try:
                from _sha2 import sha256  # type: ignore[no-redef]  # CPython 3.12+
            except ImportError:
                from hashlib import sha256  # type: ignore[no-redef]  # another Python
        _builtin = sha256
    return _builtin


def sha256_hex(data: bytes) -> str:
    """``hashlib.sha256(data).hexdigest()``."""
    if len(data) <= SMALL:
        return _small_hasher()(data).hexdigest()
    import hashlib

    return hashlib.sha256(data).hexdigest()
