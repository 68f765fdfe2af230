"""Namespaces of functions an expression can call, such as
`data.latest(...)` or `vault.get(...)`. The packages that serve them declare
them and register them here, so the engine knows none of them: a namespace
is a name, its functions, and per evaluation a provider object that the
caller puts in the ExprContext under that name.

A function is called as ``call(provider, *args)``, with provider None when
the context has none. What it raises becomes the ExpressionError's cause (a
SwampError keeps its hint); what it returns must be a plain JSON-like value."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

#: the argument and result types a function may declare
TYPES = ("string", "int", "bool", "double", "list", "map", "dyn")


@dataclass(frozen=True)
class Function:
    name: str  # the member name: `get` in `vault.get(...)`
    params: tuple[str, ...]  # one of TYPES per argument
    call: Callable[..., Any]
    returns: str = "dyn"
    usage: str | None = None  # shown when a call does not fit, e.g. "vault.get(vault, key)"

    def __post_init__(self) -> None:
        bad = [t for t in (*self.params, self.returns) if t not in TYPES]
        if bad:
            raise ValueError(f"function {self.name!r}: unknown types {bad}; expected some of {list(TYPES)}")


@dataclass(frozen=True)
class Namespace:
    name: str
    functions: tuple[Function, ...]


_lock = threading.Lock()
_registered: dict[str, Namespace] = {}
_generation = 0


def register_namespace(namespace: Namespace) -> None:
    """Make ``namespace`` callable in expressions. Registering the same
    namespace again does nothing; a different one under a taken name
    replaces it (the engine is rebuilt on its next use)."""
    global _generation
    with _lock:
        if _registered.get(namespace.name) == namespace:
            return
        _registered[namespace.name] = namespace
        _generation += 1


def registered() -> tuple[int, tuple[Namespace, ...]]:
    """(generation, namespaces): the generation changes whenever the set does."""
    with _lock:
        return _generation, tuple(_registered[n] for n in sorted(_registered))
