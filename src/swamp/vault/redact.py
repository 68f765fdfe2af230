"""Secret redaction. Every secret value resolved in this process is
registered here; every edge that writes (files, logs, records, stdout,
error messages) passes its text through ``redact_text``.

Redaction must not depend on where output was cut:

- a multi-line secret (a PEM key, a kubeconfig) is registered whole AND
  line by line, so a stream cut into lines (serve's live events, the
  terminal's activity line, a worker's step log) masks each of its lines;
- a stream cut into arbitrary chunks goes through a ``StreamRedactor``,
  which holds back the last (longest secret - 1) bytes until it knows they
  do not begin a secret, so a secret split across two writes is masked too.

Every occurrence of every secret is found, and overlapping occurrences are
masked as one: a secret that overlaps another leaves none of itself in
clear."""

from __future__ import annotations

from _thread import allocate_lock  # threading's Lock, without loading threading

MASK = "***"
# Very short values would mask ordinary words; they are still never written
# by swamp itself, but only values of at least this length are scrubbed from
# free text such as a command's stdout.
MIN_LEN = 4
#: a line of a multi-line secret is masked on its own when it has at least
#: this many characters (whitespace trimmed): shorter lines ("}", "users:")
#: are structure, not key material, and masking them would blot out ordinary
#: output. The whole secret is masked whatever its lines.
MIN_LINE_LEN = 8

_lock = allocate_lock()
_secrets: set[str] = set()
#: what is masked, longest first (text and the same as UTF-8)
_ordered: list[str] = []
_ordered_bytes: list[bytes] = []


def register_secret(value: str) -> None:
    global _ordered, _ordered_bytes
    if not isinstance(value, str) or len(value) < MIN_LEN:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        import json

        variants = [(value, MIN_LEN), (value.strip(), MIN_LEN)]
        if "\n" in value or "\r" in value:
            variants += [(line.strip(), MIN_LINE_LEN) for line in value.splitlines()]
        ordered, found = list(_ordered), set(_ordered)
        for text, least in variants:
            if len(text) < least:
                continue
            # the JSON-escaped form too, so a secret inside a JSON string is caught
            for v in (text, json.dumps(text)[1:-1]):
                if v not in found:
                    found.add(v)
                    ordered.append(v)
        ordered.sort(key=len, reverse=True)
        # New lists, swapped in whole: a reader in another thread keeps the one it took.
        # (each sorted by its own length: a character may take several bytes)
        _ordered, _ordered_bytes = ordered, sorted((s.encode() for s in ordered), key=len, reverse=True)


def redact_text(text: str) -> str:
    patterns = _ordered
    if not patterns or not text:
        return text
    return _whole(text, patterns, MASK)


def redact_bytes(data: bytes) -> bytes:
    patterns = _ordered_bytes
    if not patterns or not data:
        return data
    return _whole(bytes(data), patterns, MASK.encode())


class StreamRedactor:
    """Redacts a byte stream fed in pieces cut anywhere: ``feed`` returns
    what may be written now, ``flush`` the rest at the end. What is held
    back is at most twice the longest secret."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        patterns = _ordered_bytes
        if not patterns:
            data, self._held = self._held + bytes(chunk), b""
            return data
        out, self._held = _blocks(bytes(chunk), patterns, MASK.encode(), self._held)
        return out

    def flush(self) -> bytes:
        data, self._held = self._held, b""
        return redact_bytes(data) if data else data


#: Large text is searched a block at a time, each block for every secret:
#: the block is still in the CPU's cache for the next secret's search, which
#: a second pass over the whole text is not (several times faster with the
#: dozens of lines of a PEM key registered; bench/redact_bench.py).
BLOCK = 64 * 1024


def _whole(data, patterns, mask):
    if len(data) <= 2 * _block(patterns):
        return _direct(data, patterns, mask)
    out, held = _blocks(data, patterns, mask, data[:0])
    return out + _direct(held, patterns, mask)


def _direct(data, patterns, mask):
    hits = [s for s in patterns if s in data]
    return _masked(data, _spans(data, hits), mask) if hits else data


def _block(patterns) -> int:
    return max(BLOCK, 4 * len(patterns[0]))  # a block always longer than any secret: each step moves on


def _blocks(data, patterns, mask, held):
    """``data`` after ``held`` (the tail kept from before), a block at a
    time: (what may go out, the new tail)."""
    out = []
    size = _block(patterns)
    keep = len(patterns[0]) - 1
    for i in range(0, len(data), size):
        piece = held + data[i:i + size] if held else data[i:i + size]
        # A secret that starts before `cut` ends inside `piece`, so it is found
        # now; one that starts at or after it may still be arriving.
        cut = max(0, len(piece) - keep)
        hits = [s for s in patterns if s in piece]
        spans = _spans(piece, hits) if hits else []
        for start, end in spans:
            if start < cut < end:  # never emit half a masked stretch
                cut = start
        out.append(_masked(piece[:cut], [(s, e) for s, e in spans if e <= cut], mask))
        held = piece[cut:]
    return data[:0].join(out), held


def _spans(data, hits) -> list[tuple[int, int]]:
    """Every occurrence of every hit in ``data`` (overlapping ones too), as
    sorted, merged (start, end) spans."""
    spans = []
    for s in hits:
        i = data.find(s)
        while i != -1:
            spans.append((i, i + len(s)))
            i = data.find(s, i + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _masked(data, spans, mask):
    if not spans:
        return data
    parts, at = [], 0
    for start, end in spans:
        parts.append(data[at:start])
        parts.append(mask)
        at = end
    parts.append(data[at:])
    return data[:0].join(parts)


def clear() -> None:
    """For tests."""
    global _ordered, _ordered_bytes
    with _lock:
        _secrets.clear()
        _ordered, _ordered_bytes = [], []
