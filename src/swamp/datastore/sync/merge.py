"""Three-way, per-key merge of JSON and YAML maps (SYNC.md "mergeable
document"): base is the version both sides started from, ours the local file,
theirs the committed one. Nested maps merge key by key; any other value is
atomic. A key changed differently on both sides is a conflict that names it.

YAML: base and theirs are read with the safe loader; ours with the round-trip
loader and edited in place, so the local file keeps its comments.
"""

from __future__ import annotations

import io
import json
from typing import Any

_MISSING = object()


class MergeConflict(Exception):
    def __init__(self, keys: list[str]) -> None:
        super().__init__("changed on both sides: " + ", ".join(keys))
        self.keys = keys


class NotMergeable(Exception):
    """A side is not a map (or does not parse): fall back to keep-both."""


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _canon(v: Any) -> str:
    # Equality by canonical JSON: True != 1, key order irrelevant.
    if v is _MISSING:
        return "\x00missing"
    return json.dumps(_plain(v), sort_keys=True, default=str)


def merge_maps(base: dict, ours: dict, theirs: dict, path: tuple[str, ...] = ()) -> list[str]:
    """Apply theirs' changes since base onto ``ours`` (mutated in place).
    Returns the dotted keys that conflict (ours is then partially merged and
    must not be used)."""
    conflicts: list[str] = []
    for key in list(dict.fromkeys([*ours.keys(), *theirs.keys(), *base.keys()])):
        b, o, t = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        cb, co, ct = _canon(b), _canon(o), _canon(t)
        if co == ct or ct == cb:
            continue  # same on both sides, or only we changed it
        if co == cb:  # only they changed it
            if t is _MISSING:
                del ours[key]
            else:
                ours[key] = t
        elif isinstance(o, dict) and isinstance(t, dict) and (b is _MISSING or isinstance(b, dict)):
            conflicts += merge_maps({} if b is _MISSING else b, o, t, (*path, str(key)))
        else:
            conflicts.append(".".join((*path, str(key))))
    return conflicts


def _load(fmt: str, data: bytes, *, round_trip: bool = False) -> dict:
    try:
        if fmt == "json":
            doc = json.loads(data.decode("utf-8"))
        else:
            from ruamel.yaml import YAML

            doc = YAML(typ="rt" if round_trip else "safe", pure=False).load(data.decode("utf-8"))
    except Exception as e:  # any parse failure means "not mergeable", never a crash
        raise NotMergeable(str(e)) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise NotMergeable("not a map")
    return doc


def _dump(fmt: str, doc: dict) -> bytes:
    if fmt == "json":
        return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    from ruamel.yaml import YAML

    buf = io.StringIO()
    YAML(typ="rt").dump(doc, buf)
    return buf.getvalue().encode("utf-8")


def merge_document(fmt: str, base: bytes | None, ours: bytes, theirs: bytes) -> bytes:
    """The merged bytes; MergeConflict or NotMergeable otherwise. When the
    result equals one side, that side's exact bytes come back."""
    b = _load(fmt, base) if base is not None else {}
    o = _load(fmt, ours, round_trip=True)
    t = _load(fmt, theirs)
    ours_before = _canon(o)
    conflicts = merge_maps(b, o, t)
    if conflicts:
        raise MergeConflict(conflicts)
    merged = _canon(o)
    if merged == _canon(t):
        return theirs
    if merged == ours_before:
        return ours
    return _dump(fmt, o)
