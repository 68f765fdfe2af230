"""Secret redaction. Every secret value resolved in this process is
registered here; every edge that writes (files, logs, records, stdout,
error messages) passes its text through ``redact_text``."""

from __future__ import annotations

from _thread import allocate_lock  # threading's Lock, without loading threading

MASK = "***"
# Very short values would mask ordinary words; they are still never written
# by swamp itself, but only values of at least this length are scrubbed from
# free text such as a command's stdout.
MIN_LEN = 4

_lock = allocate_lock()
_secrets: set[str] = set()
_ordered: list[str] = []


def register_secret(value: str) -> None:
    if not isinstance(value, str) or len(value) < MIN_LEN:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        variants = {value, value.strip()}
        # JSON-escaped forms, so a secret inside a JSON string is caught too.
        import json

        variants.add(json.dumps(value)[1:-1])
        for v in variants:
            if len(v) >= MIN_LEN and v not in _ordered:
                _ordered.append(v)
        _ordered.sort(key=len, reverse=True)


def redact_text(text: str) -> str:
    if not _ordered or not text:
        return text
    for s in list(_ordered):
        if s in text:
            text = text.replace(s, MASK)
    return text


def redact_bytes(data: bytes) -> bytes:
    if not _ordered or not data:
        return data
    for s in list(_ordered):
        b = s.encode()
        if b in data:
            data = data.replace(b, MASK.encode())
    return data


def clear() -> None:
    """For tests."""
    with _lock:
        _secrets.clear()
        _ordered.clear()
