"""SHA-256 without importing hashlib for a small input: hashlib loads
OpenSSL (about 2 ms of a command's start), while CPython's own SHA-256
module loads at once and gives the same digest. A large input goes to
hashlib, whose OpenSSL code is the faster one. ``sha256_hex`` hashes bytes
in memory, ``Sha256Stream`` a stream written in chunks."""

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


class Sha256Stream:
    """``hashlib.sha256()`` of a stream, by the same rule: up to SMALL bytes
    are kept and hashed at the end by the builtin module; past that, what
    was kept and the rest go to hashlib. The same digest either way."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._big: Any = None

    def update(self, chunk: bytes) -> None:
        if self._big is not None:
            self._big.update(chunk)
            return
        # Kept until the end, so a copy of what a reused buffer holds now (bytes: the same object).
        chunk = bytes(chunk)
        self._chunks.append(chunk)
        self._size += len(chunk)
        if self._size > SMALL:
            import hashlib

            self._big = hashlib.sha256()
            for c in self._chunks:
                self._big.update(c)
            self._chunks = []

    def hexdigest(self) -> str:
        if self._big is not None:
            return self._big.hexdigest()
        return sha256_hex(b"".join(self._chunks))
