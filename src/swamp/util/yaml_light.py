"""The plain YAML swamp itself writes, read and written without ruamel.yaml.

Importing ruamel.yaml costs a command ~7 ms; the files a method run or a
``data get`` touches (``.swamp.yaml``, a definition, ``metadata.yaml``, an
output record) are small block mappings that swamp wrote. This module
handles exactly that narrow form: block mappings and sequences indented as
ruamel writes them, ``{}`` and ``[]``, single-quoted strings, and plain
scalars whose meaning cannot be in doubt (a canonical integer, ``true``,
``false``, ``null``, a word, a UUID, a dotted version, a hex digest). On
anything else (a comment, a double-quoted or block scalar, a flow
collection with content, an anchor, a tab, a scalar that might be a
float or a date...) it gives up and ``util/yamlio`` hands the text, or the
data, to ruamel.yaml, which stays the reader and writer of YAML. So it never
decides anything ruamel would decide differently:
tests/unit/test_yaml_light.py compares both on many documents."""

from __future__ import annotations

import re
from typing import Any

#: a plain scalar that is certainly a string: it starts with a letter, "_"
#: or "/" (so it is no number, date or special float), and has no ": ", " #"
#: nor a trailing ":" (so it is no key or comment); or a UUID, a dotted
#: version (two dots at least: no float) or a lower-case hex digest
_WORDISH = re.compile(r"[A-Za-z_/][A-Za-z0-9 _./@+=,()$:-]*\Z")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
_DOTTED = re.compile(r"[0-9]+(?:\.[0-9]+){2,}\Z")
_HEX = re.compile(r"[0-9][0-9a-f]*\Z")
_HEX_NUMBER = re.compile(r"[0-9]+(?:e[0-9]+)?\Z|0b[0-1]+\Z")  # an int, a float with exponent, a binary int
#: words a YAML reader may take for a boolean or null, in any case
_SPECIAL = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
#: what the writer emits plain: no space, no ":" (ruamel's own rules for
#: plain scalars are wider; these are within them)
_PLAIN_OUT = re.compile(r"[A-Za-z0-9_./-]+\Z")
#: values also written plain, as ruamel writes them: text that starts with a
#: letter and holds ":", "@", "(", ")" or single spaces too (who did it:
#: util/actors.py, "token:ci (user:alice)"), never ": " nor a trailing ":"
#: (is_plain_string), on a line of at most _FOLD_AT columns (past it, ruamel
#: folds a plain scalar at a space)
_WORDS_OUT = re.compile(r"[A-Za-z_][A-Za-z0-9 _./@():-]*\Z")
_FOLD_AT = 80
#: strings ruamel writes single-quoted because unquoted they would read as
#: something else: an integer, a boolean or null, a timestamp, nothing
_QUOTED_OUT = re.compile(r"(?:-?(?:0|[1-9][0-9]{0,17})|true|false|null"
                         r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z)?|)\Z")
_KEY_OUT_MAX = 100  # a longer key is written as a complex key ("? ...") by ruamel
_KEY = re.compile(r"([^ :#'\"]+):(?: (.*))?\Z")


class _NotPlain(Exception):
    """Not the narrow form: ruamel.yaml decides."""


def is_plain_string(s: str) -> bool:
    """Whether the plain scalar ``s`` is certainly the string ``s``."""
    if _WORDISH.match(s):
        return (s.lower() not in _SPECIAL and not s.endswith((":", " ")) and ": " not in s and " #" not in s
                and "  " not in s)
    if _UUID.match(s) or _DOTTED.match(s):
        return True
    return bool(_HEX.match(s)) and not _HEX_NUMBER.match(s)


# ------------------------------------------------------------------- reading
def _printable(s: str) -> bool:
    for ch in s:
        o = ord(ch)
        if o < 0x20 or 0x7f <= o < 0xa0 or o in (0x2028, 0x2029, 0xfeff) or 0xd800 <= o <= 0xdfff or o > 0xfffd \
                and o < 0x10000:
            return False
    return True


def _scalar(text: str) -> Any:
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if text.startswith("'"):
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith("'") or "'" in inner.replace("''", "") or not _printable(inner):
            raise _NotPlain
        return inner.replace("''", "'")
    if _INT.match(text) and text != "-0":
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    if text in ("null", "~"):
        return None
    if is_plain_string(text):
        return text
    raise _NotPlain


def _lines(text: str) -> list[tuple[int, str]]:
    """(indent, content) of each line; blank lines dropped."""
    out = []
    for raw in text.split("\n"):
        if not raw:
            continue
        body = raw.lstrip(" ")
        if not body or raw.endswith(" ") or "\t" in raw or "\r" in raw:
            raise _NotPlain
        out.append((len(raw) - len(body), body))
    return out


class _Reader:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.i = 0

    def node(self, indent: int) -> Any:
        ind, body = self.lines[self.i]
        if ind != indent:
            raise _NotPlain
        if body == "-" or body.startswith("- "):
            return self.seq(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> dict:
        out: dict = {}
        while self.i < len(self.lines):
            ind, body = self.lines[self.i]
            if ind < indent:
                break
            if ind > indent or body == "-" or body.startswith("- "):
                raise _NotPlain
            m = _KEY.match(body)
            if m is None:
                raise _NotPlain
            key = _scalar(m.group(1))
            if type(key) is not str or key in out:
                raise _NotPlain
            self.i += 1
            rest = m.group(2)
            if rest is not None and rest != "":
                out[key] = _scalar(rest)
            elif self.i < len(self.lines) and self.lines[self.i][0] > indent:
                out[key] = self.node(self.lines[self.i][0])
            elif self.i < len(self.lines) and self.lines[self.i][0] == indent and (
                    self.lines[self.i][1] == "-" or self.lines[self.i][1].startswith("- ")):
                out[key] = self.seq(indent)
            elif rest is None:
                out[key] = None
            else:
                raise _NotPlain  # "key: " with nothing after the space
        return out

    def seq(self, indent: int) -> list:
        out: list = []
        while self.i < len(self.lines):
            ind, body = self.lines[self.i]
            if ind != indent or not body.startswith("- "):
                if ind > indent or (ind == indent and body == "-"):
                    raise _NotPlain
                break
            item = body[2:]
            if item.startswith(" ") or item == "-" or item.startswith("- "):
                raise _NotPlain
            if _KEY.match(item) and not item.startswith("'"):
                self.lines[self.i] = (indent + 2, item)  # "- key: v": a mapping two columns in
                out.append(self.mapping(indent + 2))
            else:
                out.append(_scalar(item))
                self.i += 1
        return out


def load(text: str) -> tuple[bool, Any]:
    """(True, the document) when ``text`` is in the narrow form, else
    (False, None): then ruamel.yaml reads it."""
    try:
        lines = _lines(text)
        if not lines or lines[0][0] != 0:
            return False, None
        reader = _Reader(lines)
        doc = reader.mapping(0)
        if reader.i != len(lines):
            return False, None
        return True, doc
    except (_NotPlain, IndexError, RecursionError):  # (nested deeper than Python's stack: ruamel reads it)
        return False, None


# ------------------------------------------------------------------- writing
def _scalar_out(value: Any, column: int = 0) -> str:
    """``value`` as ruamel writes it, starting at ``column`` of its line."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is str:
        if _PLAIN_OUT.match(value) and is_plain_string(value):
            return value
        if _WORDS_OUT.match(value) and is_plain_string(value) and (" " not in value
                                                                    or column + len(value) <= _FOLD_AT):
            return value
        if _QUOTED_OUT.match(value):
            return f"'{value}'"
    raise _NotPlain


def _key_out(key: Any) -> str:
    if type(key) is not str or len(key) > _KEY_OUT_MAX or not _PLAIN_OUT.match(key) or not is_plain_string(key):
        raise _NotPlain
    return key


def _mapping_out(d: dict, indent: int, out: list[str], first: str | None = None) -> None:
    pad = " " * indent
    for n, (k, v) in enumerate(d.items()):
        lead = first if (n == 0 and first is not None) else pad
        key = _key_out(k)
        if type(v) is dict:
            if not v:
                out.append(f"{lead}{key}: {{}}")
            else:
                out.append(f"{lead}{key}:")
                _mapping_out(v, indent + 2, out)
        elif type(v) is list:
            if not v:
                out.append(f"{lead}{key}: []")
            else:
                out.append(f"{lead}{key}:")
                _seq_out(v, indent, out)
        else:
            out.append(f"{lead}{key}: {_scalar_out(v, len(lead) + len(key) + 2)}")


def _seq_out(items: list, indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if type(item) is dict:
            if not item:
                out.append(f"{pad}- {{}}")
            else:
                _mapping_out(item, indent + 2, out, first=f"{pad}- ")
        elif type(item) is list:
            raise _NotPlain
        else:
            out.append(f"{pad}- {_scalar_out(item, len(pad) + 2)}")


def dump(data: Any) -> str | None:
    """What ruamel.yaml's safe dumper writes for ``data`` (block style),
    when ``data`` is a non-empty dict in the narrow form; else None."""
    if type(data) is not dict or not data:
        return None
    out: list[str] = []
    try:
        if _shares_a_container(data, set()):
            return None  # ruamel writes an anchor and an alias for it
        _mapping_out(data, 0, out)
    except (_NotPlain, RecursionError):
        return None
    return "\n".join(out) + "\n"


def _shares_a_container(value: Any, seen: set[int]) -> bool:
    """Whether one list or dict appears twice in ``value``."""
    t = type(value)
    if t is not dict and t is not list:
        return False
    if id(value) in seen:
        return True
    seen.add(id(value))
    return any(_shares_a_container(v, seen) for v in (value.values() if t is dict else value))
