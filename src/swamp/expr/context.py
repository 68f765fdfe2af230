"""What an expression sees: the root variables and, per namespace, the
provider serving its functions. Below both the API and the CEL adapter."""

from __future__ import annotations

from typing import Any, Mapping

# Root variables an expression may name. Namespaces of functions (`data`,
# `vault`) are not variables: their owners register them (namespaces.py).
ROOTS = ("inputs", "self", "model", "env", "run", "steps")


class ExprContext:
    """The variables (a subset of ROOTS) an expression sees, and the
    providers of registered namespaces by name (``{"data": ...}``); a
    namespace without a provider here gets None. When ``env`` is not given,
    expressions see the process environment."""

    __slots__ = ("variables", "providers")

    def __init__(self, variables: Mapping[str, Any] | None = None, *,
                 providers: Mapping[str, Any] | None = None):
        variables = dict(variables or {})
        unknown = sorted(set(variables) - set(ROOTS))
        if unknown:
            raise ValueError(f"unknown expression roots {unknown}; expected some of {list(ROOTS)}")
        self.variables = variables
        self.providers = dict(providers or {})
