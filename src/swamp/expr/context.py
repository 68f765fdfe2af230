"""What an expression sees: the root variables and the providers of the
`data` and `vault` namespaces. Below both the API and the CEL adapter."""

from __future__ import annotations

from typing import Any, Mapping, Protocol

# Root variables an expression may name. `data` and `vault` are namespaces of
# functions (`data.latest(...)`, `vault.get(...)`), served by the providers.
ROOTS = ("inputs", "self", "model", "env", "run", "steps")
NAMESPACES = ("data", "vault")


class DataProvider(Protocol):
    """Serves `data.*` during evaluation. Records are plain dicts such as
    ``{"id", "name", "version", "createdAt", "attributes", "content",
    "tags", ...}``; a missing record is None. Exceptions raised here become
    the ExpressionError's cause (a SwampError keeps its hint)."""

    def latest(self, model: str, name: str) -> dict | None: ...

    def version(self, model: str, name: str, version: int) -> dict | None: ...

    def list_versions(self, model: str, name: str) -> list[dict]: ...

    def find_by_spec(self, model: str, spec: str) -> list[dict]: ...

    def find_by_tag(self, key: str, value: str) -> list[dict]: ...

    def query(self, predicate: str, select: str | None = None) -> list: ...


class VaultProvider(Protocol):
    """Secrets, for resolving vault sentinels when a method runs (``get``) and
    for failing early on a missing secret during evaluation (``exists``).
    ``get`` registers the value with the redactor before returning it."""

    def get(self, vault: str, key: str) -> str: ...

    def exists(self, vault: str, key: str) -> bool: ...


class ExprContext:
    """The variables (a subset of ROOTS) and providers an expression sees.
    When ``env`` is not given, expressions see the process environment."""

    __slots__ = ("variables", "data", "vault")

    def __init__(
        self,
        variables: Mapping[str, Any] | None = None,
        *,
        data: DataProvider | None = None,
        vault: VaultProvider | None = None,
    ):
        variables = dict(variables or {})
        unknown = sorted(set(variables) - set(ROOTS))
        if unknown:
            raise ValueError(f"unknown expression roots {unknown}; expected some of {list(ROOTS)}")
        self.variables = variables
        self.data = data
        self.vault = vault

    def extend(self, variables: Mapping[str, Any]) -> "ExprContext":
        """A context with some variables replaced, e.g. ``self`` per forEach item."""
        return ExprContext({**self.variables, **variables}, data=self.data, vault=self.vault)
