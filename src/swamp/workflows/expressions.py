"""What ``${{ }}`` in a workflow sees: ``inputs`` (the workflow's inputs),
``self`` (a forEach step's item), ``run``, ``env``, ``model``, ``data`` and
``vault``. Vault references stay sentinels; the runner resolves them only
when a method runs."""

from __future__ import annotations

import re
import threading
from typing import Any

from swamp.expr.template import has_expressions

_MODEL_ROOT = re.compile(r"\bmodel\b")
_UNSET = object()


class Scope:
    """The expression variables of one workflow run. Errors name the
    workflow file and the field."""

    def __init__(self, repo, source: str, inputs: dict, run_info: dict) -> None:
        self.repo = repo
        self.source = source
        self.variables = {"inputs": inputs, "run": run_info}
        self._providers: tuple | None = None
        self._models: dict | None = None

    def _context(self, value: Any, item: Any):
        from swamp.expr import api as expr

        variables = dict(self.variables)
        if item is not _UNSET:
            variables["self"] = item
        if _MODEL_ROOT.search(str(value)):
            variables["model"] = self.models()
        data, vault = self.providers()
        return expr.ExprContext(variables, data=data, vault=vault)

    def providers(self) -> tuple:
        if self._providers is None:
            from swamp.data.provider import RepoDataProvider
            from swamp.vault.service import RepoVaults

            self._providers = (CachedData(RepoDataProvider(self.repo)), RepoVaults(self.repo))
        return self._providers

    def data_changed(self) -> None:
        """A step wrote data: what ``data.*`` returned before may be stale."""
        if self._providers is not None:
            self._providers[0].clear()

    def models(self) -> dict:
        if self._models is None:
            self._models = model_namespace(self.repo)
        return self._models

    def render(self, value: Any, field: str, item: Any = _UNSET) -> Any:
        """``value`` with every ``${{ }}`` evaluated; ``item`` is ``self``."""
        if not has_expressions(value):
            return value
        from swamp.expr import api as expr

        return expr.render(value, self._context(value, item), source=self.source, field=field)

    def condition(self, value: str | bool, field: str, item: Any = _UNSET) -> Any:
        """A guard or an assert: ``${{ expr }}`` or bare CEL (``a == b``)."""
        if isinstance(value, bool):
            return value
        if has_expressions(value):
            return self.render(value, field, item)
        from swamp.expr import api as expr

        return expr.evaluate(value, self._context(value, item), source=self.source, field=field)


class CachedData:
    """``data.*`` answers cached per call within a run (a forEach over many
    items asks the same thing many times), cleared whenever a step writes."""

    def __init__(self, provider) -> None:
        self._provider = provider
        self._cache: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def __getattr__(self, method: str):
        fn = getattr(self._provider, method)

        def call(*args):
            key = (method, *args)
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
            value = fn(*args)
            with self._lock:
                self._cache[key] = value
            return value

        return call

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


def model_namespace(repo) -> dict:
    """``model.<name>``: each definition's identity and configuration, as
    ``{id, name, type, version, tags, input: {globalArguments}}``."""
    from swamp.errors import SwampError
    from swamp.models.definitions import iter_definition_files, load_definition

    out = {}
    for path in iter_definition_files(repo):
        try:
            d = load_definition(path)
        except SwampError:
            continue  # a broken definition fails where it is used, not here
        out[d.name] = {"id": d.id, "name": d.name, "type": d.type, "version": d.version, "tags": d.tags,
                       "input": {"globalArguments": d.globalArguments}}
    return out


def truthy(value: Any) -> bool:
    """false, null, 0, "" and empty lists and maps are false; "false" too,
    for a guard that interpolates a boolean into text."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false")
    return bool(value)


UNSET = _UNSET
