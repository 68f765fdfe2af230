"""Vault sentinels: what `vault.get(VAULT, KEY)` evaluates to. Secrets stay
out of expression results, rendered arguments and anything persisted from
them; a sentinel is swapped for the secret only when a method runs.

A sentinel is plain ASCII that JSON and YAML leave untouched, so it survives
interpolation (`"Bearer ${{ vault.get('v', 'k') }}"`). It carries a random
per-process token: text arriving from outside (inputs, data) cannot name a
secret by spelling a sentinel, and sentinels do not outlive the process."""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Mapping

from swamp.vault.names import check_key_name, check_vault_name
from swamp.vault.redact import register_secret

_TOKEN = os.urandom(8).hex()  # secrets.token_hex(8), without loading secrets (hmac, hashlib, random)
_PREFIX = f"<<swamp-vault:{_TOKEN}:"
_RE = re.compile(re.escape(_PREFIX) + r"([a-z0-9][a-z0-9_-]*):([A-Za-z0-9][A-Za-z0-9._-]*)>>")

Lookup = Callable[[str, str], str]


def make_sentinel(vault: str, key: str) -> str:
    check_vault_name(vault)
    check_key_name(key)
    return f"{_PREFIX}{vault}:{key}>>"


def find_sentinels(value: Any) -> list[tuple[str, str]]:
    """Every (vault, key) named by a sentinel in a nested value, first
    occurrence order, without repeats."""
    found: dict[tuple[str, str], None] = {}
    for s in _strings(value):
        for m in _RE.finditer(s):
            found.setdefault((m.group(1), m.group(2)), None)
    return list(found)


def resolve_sentinels(value: Any, lookup: Lookup) -> Any:
    """A copy of ``value`` with each sentinel replaced by its secret. Every
    secret is registered with the redactor before it is placed anywhere."""
    return _Resolver(lookup).walk(value)


def to_env(run: str, env: Mapping[str, str] | None, lookup: Lookup,
           *, prefix: str = "__SWAMP_VAULT_") -> tuple[str, dict[str, str]]:
    """For shell commands: secrets travel in environment variables, never in
    the command text. Returns ``(run, env)``: the command with each sentinel
    replaced by a reference to ``{prefix}N``, quoted to fit where it stood
    (so the value is one word, unsplit and unglobbed), and ``env`` with its
    own sentinels resolved plus those variables."""
    resolver = _Resolver(lookup)
    names: dict[tuple[str, str], str] = {}
    extra: dict[str, str] = {}

    def var(m: re.Match) -> str:
        ref = (m.group(1), m.group(2))
        if ref not in names:
            names[ref] = f"{prefix}{len(names)}"
            extra[names[ref]] = resolver.secret(*ref)
        return names[ref]

    out: list[str] = []
    quote = ""  # the shell quoting state: "", "'" or '"'
    i, n = 0, len(run)
    while i < n:
        c = run[i]
        if c == "<":
            m = _RE.match(run, i)
            if m:
                name = var(m)
                out.append({"": f'"${{{name}}}"', '"': f"${{{name}}}", "'": f"'\"${{{name}}}\"'"}[quote])
                i = m.end()
                continue
        if c == "\\" and quote != "'":
            out.append(run[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote == c else c
        out.append(c)
        i += 1
    new_env = {k: resolver.walk(v) for k, v in (env or {}).items()}
    new_env.update(extra)
    return "".join(out), new_env


class _Resolver:
    def __init__(self, lookup: Lookup):
        self.lookup = lookup
        self.cache: dict[tuple[str, str], str] = {}

    def secret(self, vault: str, key: str) -> str:
        ref = (vault, key)
        if ref not in self.cache:
            value = self.lookup(vault, key)
            register_secret(value)
            self.cache[ref] = value
        return self.cache[ref]

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            if _PREFIX not in value:
                return value
            return _RE.sub(lambda m: self.secret(m.group(1), m.group(2)), value)
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.walk(v) for v in value]
        return value


def _strings(value: Any):
    if isinstance(value, str):
        if _PREFIX in value:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def describe_sentinels(text: str) -> str:
    """Text fit to record: each sentinel shown as the expression that made
    it, so records stay readable and carry no per-process token."""
    return _RE.sub(lambda m: "${{ vault.get('%s', '%s') }}" % (m.group(1), m.group(2)), text)
