"""A version's metadata.yaml, parsed once per process while the file keeps
its stamp (util/file_stamps.py).

swamp serve reads the same versions' metadata over and over, and parsing
the YAML was a third of a data read. A version's metadata is written once
(a rename writes a new one, a delete removes it, a pull replaces the file),
and every one of those changes the stamp, so the next read parses it
again. A file not on disk (not hydrated yet) is read through the datastore
as before and not kept. Callers get their own copy."""

from __future__ import annotations

from typing import Any, Callable

from swamp.util import file_stamps

#: documents kept at most (a bound: one per version read)
MAX_ENTRIES = 8192

_entries: dict[tuple, tuple[Any, Any]] = {}


def _copy(value: Any) -> Any:
    # (containers only: the scalars are immutable and most of a document)
    if isinstance(value, dict):
        return type(value)({k: _copy(v) if isinstance(v, (dict, list)) else v for k, v in value.items()})
    if isinstance(value, list):
        return [_copy(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


def read(ds, rel: str, parse: Callable[[str], Any]) -> Any:
    """``parse`` of the text of ``rel`` in ``ds``, from the last parse when
    the file's stamp is the same (``ds.read_bytes`` raises as ever when it
    is missing)."""
    path = ds.local_path(rel)
    key = (ds.root, rel)
    taken = file_stamps.now_ns()
    before = file_stamps.stamp_of(path)
    hit = _entries.get(key)
    if hit is not None and before is not None and hit[0] == before:
        return _copy(hit[1])
    doc = parse(ds.read_bytes(rel).decode())
    if before is not None and file_stamps.settled([before], taken) and file_stamps.stamp_of(path) == before:
        if len(_entries) >= MAX_ENTRIES:  # (each step is one dict operation: safe across threads)
            _entries.clear()
        _entries[key] = (before, _copy(doc))
    else:
        _entries.pop(key, None)
    return doc
