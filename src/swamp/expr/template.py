"""`${{ ... }}` templates: finding expressions in strings and walking nested
values. Knows nothing about CEL beyond its lexical rules for string
literals, comments and braces, which decide where an expression ends:
`}}` may occur inside a string literal or close a nested map literal."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterator

OPEN = "${{"
CLOSE = "}}"


@dataclass(frozen=True)
class Expr:
    """One `${{ ... }}` occurrence: the CEL text (stripped) and where the
    whole `${{ ... }}` sits in the template string."""

    text: str
    start: int
    end: int


class TemplateSyntaxError(ValueError):
    """A malformed template: ``position`` is the offset in ``template``;
    ``path`` is the field, filled in by whoever walked to it."""

    def __init__(self, message: str, position: int, template: str = "", path: str = ""):
        super().__init__(message)
        self.position = position
        self.template = template
        self.path = path


Segment = str | Expr


@lru_cache(maxsize=8192)
def parse(template: str) -> tuple[Segment, ...]:
    """Split a template into literal strings and expressions, in order.
    Empty literals are dropped, so a whole-expression template is one Expr."""
    try:
        return _parse(template)
    except TemplateSyntaxError as e:
        e.template = template
        raise


def _parse(template: str) -> tuple[Segment, ...]:
    out: list[Segment] = []
    pos = 0
    while True:
        start = template.find(OPEN, pos)
        if start < 0:
            break
        body_start = start + len(OPEN)
        body_end = _scan_body(template, body_start)
        text = template[body_start:body_end].strip()
        if not text:
            raise TemplateSyntaxError("empty expression", start)
        if start > pos:
            out.append(template[pos:start])
        end = body_end + len(CLOSE)
        out.append(Expr(text, start, end))
        pos = end
    if pos < len(template):
        out.append(template[pos:])
    return tuple(out)


def _scan_body(s: str, i: int) -> int:
    """Index of the `}}` that closes the expression starting at ``i``."""
    depth = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c in "'\"":
            i = _skip_string(s, i)
            continue
        if c == "/" and s.startswith("//", i):
            nl = s.find("\n", i)
            i = n if nl < 0 else nl + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                if s.startswith(CLOSE, i):
                    return i
                raise TemplateSyntaxError("unbalanced '}' in expression", i)
            depth -= 1
        i += 1
    raise TemplateSyntaxError("'${{' is never closed by '}}'", i)


def _skip_string(s: str, i: int) -> int:
    """Index just past the CEL string literal whose quote is at ``i``."""
    quote = s[i]
    raw = _is_raw(s, i)
    delim = quote * 3 if s.startswith(quote * 3, i) else quote
    j = i + len(delim)
    n = len(s)
    while j < n:
        if not raw and s[j] == "\\":
            j += 2
            continue
        if s.startswith(delim, j):
            return j + len(delim)
        if len(delim) == 1 and s[j] == "\n":
            break
        j += 1
    raise TemplateSyntaxError("unterminated string literal in expression", i)


def _is_raw(s: str, quote_at: int) -> bool:
    # A prefix is one or two letters from r/R and b/B right before the quote,
    # not part of a longer identifier.
    k = quote_at
    while k > 0 and s[k - 1] in "rRbB" and quote_at - k < 2:
        k -= 1
    if k > 0 and (s[k - 1].isalnum() or s[k - 1] == "_"):
        return False
    return "r" in s[k:quote_at].lower()


def has_expressions(value: Any) -> bool:
    if isinstance(value, str):
        return OPEN in value
    if isinstance(value, dict):
        return any(has_expressions(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_expressions(v) for v in value)
    return False


def iter_templates(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path, string) for every string in ``value`` holding `${{`."""
    if isinstance(value, str):
        if OPEN in value:
            yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from iter_templates(v, join_path(path, k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from iter_templates(v, f"{path}[{i}]")


def join_path(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def render(value: Any, evaluate: Callable[[Expr, str, str], Any], path: str = "") -> Any:
    """A copy of ``value`` with every template string rendered.
    ``evaluate(expr, template, path)`` returns the expression's value."""
    if isinstance(value, str):
        if OPEN not in value:
            return value
        return render_string(value, evaluate, path)
    if isinstance(value, dict):
        return {k: render(v, evaluate, join_path(path, k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [render(v, evaluate, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def render_string(template: str, evaluate: Callable[[Expr, str, str], Any], path: str = "") -> Any:
    try:
        segments = parse(template)
    except TemplateSyntaxError as e:
        e.path = path
        raise
    if len(segments) == 1 and isinstance(segments[0], Expr):
        return evaluate(segments[0], template, path)
    parts = []
    for seg in segments:
        parts.append(seg if isinstance(seg, str) else to_text(evaluate(seg, template, path)))
    return "".join(parts)


def to_text(value: Any) -> str:
    """How a value reads inside a string: strings bare, everything else as
    JSON would print it (`true`, `3`, `null`, `["a","b"]`)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
