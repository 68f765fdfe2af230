"""How each synced path behaves (SYNC.md "Conflicts"), as declared by the
package that owns the path. The sync engine receives one ``PathRules`` at
construction and names no path of its own; what never syncs is the one
local-only rule in ``localonly.py``.

A declaration is plain data, a mapping with any of:

- ``immutable``: patterns of paths written once (or only ever rewritten by
  one writer under a lease); a conflict on one is a bug: refused, both kept;
- ``lazy``: patterns of contents a lazily hydrated cache fetches on first
  read instead of at pull;
- ``mergeable``: ``{pattern: "json" | "yaml"}``, documents merged per key;
- ``renumber``: the owner's version scheme (a ``version_scheme.VersionScheme``
  object, handed as a value) for numbered version directories under
  immutable paths: a version of ours never published, whose number a peer
  published first, is moved to the next free number instead of being saved
  aside.

Every other synced path is OTHER: on a conflict theirs stays in place and
ours is saved aside.

Patterns match the whole datastore-relative path, segment by segment: ``*``
is one segment (or part of one: ``*.yaml``), ``**`` any number of segments
(none included), ``{int}`` one segment of digits."""

from __future__ import annotations

import enum
import re
from typing import Iterable, Mapping

from swamp.util.plain import Frozen

from .localonly import is_local_only
from .version_scheme import VersionScheme

FORMATS = ("json", "yaml")


class PathClass(enum.Enum):
    IMMUTABLE = "immutable"
    MERGEABLE = "mergeable"
    LOCAL_ONLY = "local-only"
    OTHER = "other"


def _segment(seg: str) -> str:
    if seg == "{int}":
        return "[0-9]+"
    if seg == "*":
        return "[^/]+"
    return "".join("[^/]*" if ch == "*" else re.escape(ch) for ch in seg)


def compile_pattern(pattern: str) -> re.Pattern[str]:
    segs = pattern.strip("/").split("/")
    if not pattern or any(not s for s in segs):
        raise ValueError(f"invalid path pattern {pattern!r}")
    out = ""
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg == "**":
            out += "[^/].*" if last else "(?:[^/]+/)*"
        else:
            out += _segment(seg) + ("" if last else "/")
    return re.compile(out + r"\Z")


def _any(patterns: Iterable[str]) -> re.Pattern[str] | None:
    compiled = [compile_pattern(p).pattern for p in patterns]
    return re.compile("|".join(f"(?:{c})" for c in compiled)) if compiled else None


class PathRules(Frozen):
    __slots__ = ("immutable", "lazy", "mergeable", "renumber", "_compiled")
    _hidden = ("_compiled",)
    immutable: tuple[str, ...]
    lazy: tuple[str, ...]
    mergeable: tuple[tuple[str, str], ...]
    renumber: tuple[VersionScheme, ...]
    _compiled: tuple

    def __init__(self, immutable: tuple[str, ...] = (), lazy: tuple[str, ...] = (),
                 mergeable: tuple[tuple[str, str], ...] = (), renumber: tuple[VersionScheme, ...] = ()) -> None:
        _set = object.__setattr__
        _set(self, "immutable", immutable)
        _set(self, "lazy", lazy)
        _set(self, "mergeable", mergeable)
        _set(self, "renumber", renumber)
        for pattern, fmt in self.mergeable:
            if fmt not in FORMATS:
                raise ValueError(f"unknown mergeable format {fmt!r} for {pattern!r}")
        for scheme in self.renumber:
            # a scheme is handed as an object by its owner's code; a name
            # (text) is never imported: nothing in a declaration is evaluated
            if isinstance(scheme, str) or not callable(getattr(scheme, "split", None)) \
                    or not callable(getattr(scheme, "rewrite", None)):
                raise ValueError(f"a version scheme is an object with split() and rewrite(), not {scheme!r}")
        _set(self, "_compiled", (
            _any(self.immutable), _any(self.lazy),
            tuple((compile_pattern(p), fmt) for p, fmt in self.mergeable)))

    @classmethod
    def of(cls, *declarations: Mapping) -> "PathRules":
        """The rules of several owners' declarations together."""
        immutable: list[str] = []
        lazy: list[str] = []
        mergeable: list[tuple[str, str]] = []
        renumber: list[VersionScheme] = []
        for d in declarations:
            unknown = set(d) - {"immutable", "lazy", "mergeable", "renumber"}
            if unknown:
                raise ValueError(f"unknown path rule kind(s) {sorted(unknown)}")
            immutable += d.get("immutable", ())
            lazy += d.get("lazy", ())
            mergeable += dict(d.get("mergeable", {})).items()
            if d.get("renumber"):
                renumber.append(d["renumber"])
        return cls(tuple(immutable), tuple(lazy), tuple(mergeable), tuple(renumber))

    def with_mergeable(self, pattern: str, fmt: str | None = None) -> "PathRules":
        """These rules plus one more mergeable document (format from the
        extension when not given)."""
        fmt = fmt or ("yaml" if pattern.endswith((".yaml", ".yml")) else "json")
        return PathRules(self.immutable, self.lazy, (*self.mergeable, (pattern, fmt)), self.renumber)

    # ------------------------------------------------------------- questions
    def classify(self, rel: str) -> PathClass:
        if is_local_only(rel):
            return PathClass.LOCAL_ONLY
        immutable, _lazy, _merge = self._compiled
        if immutable is not None and immutable.match(rel):
            return PathClass.IMMUTABLE
        if self.mergeable_format(rel) is not None:
            return PathClass.MERGEABLE
        return PathClass.OTHER

    def mergeable_format(self, rel: str) -> str | None:
        for rx, fmt in self._compiled[2]:
            if rx.match(rel):
                return fmt
        return None

    def version_scheme(self, rel: str) -> VersionScheme | None:
        """The declared version scheme that ``rel`` is a version path of, or None."""
        for scheme in self.renumber:
            if scheme.split(rel) is not None:
                return scheme
        return None

    def is_lazy(self, rel: str) -> bool:
        lazy = self._compiled[1]
        return lazy is not None and bool(lazy.match(rel))


#: no declarations: every synced path is OTHER (tests of the mechanics)
NO_RULES = PathRules()
