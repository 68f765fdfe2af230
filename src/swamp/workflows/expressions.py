"""What ``${{ }}`` in a workflow sees: ``inputs`` (the workflow's inputs),
``self`` (a forEach step's item), ``run``, ``env``, ``model``, ``data`` and
``vault``, evaluated through the one bridge (models/expressions.py). Vault
references stay sentinels; the runner resolves them only when a method runs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from swamp.expr.template import has_expressions

if TYPE_CHECKING:
    from swamp.repo.context import Repo

_MODEL_ROOT = re.compile(r"\bmodel\b")
_UNSET = object()


class Scope:
    """The expression variables of one workflow run. Errors name the
    workflow file and the field."""

    def __init__(self, repo: Repo, source: str, inputs: dict, run_info: dict, *, ephemeral: dict | None = None,
                 probe=None) -> None:
        from swamp.models.expressions import Expressions

        self.repo = repo
        self.source = source
        self.variables = {"inputs": inputs, "run": run_info}
        self.expressions = Expressions(repo, cache_data=True, ephemeral=ephemeral, probe=probe)
        self._models: dict | None = None
        self._with_data: dict | None = None

    def _variables(self, value: Any, item: Any) -> dict:
        variables = dict(self.variables)
        if item is not _UNSET:
            variables["self"] = item
        if _MODEL_ROOT.search(str(value)):
            variables["model"] = self.models(value)
        return variables

    def data_changed(self) -> None:
        """A step wrote data: what ``data.*`` returned before may be stale."""
        self.expressions.data_changed()
        self._with_data = None

    def models(self, value: Any = "") -> dict:
        from swamp.models.expressions import _reads_model_data, model_namespace

        if _reads_model_data(str(value)):  # model.NAME.resource...: the latest data, read now
            if self._with_data is None:
                self._with_data = model_namespace(self.repo, data=True)
            return self._with_data
        if self._models is None:
            self._models = model_namespace(self.repo)
        return self._models

    def render(self, value: Any, field: str, item: Any = _UNSET) -> Any:
        """``value`` with every ``${{ }}`` evaluated; ``item`` is ``self``."""
        if not has_expressions(value):
            return value
        return self.expressions.render(value, self._variables(value, item), source=self.source, field=field)

    def condition(self, value: str | bool, field: str, item: Any = _UNSET) -> Any:
        """A guard or an assert: ``${{ expr }}`` or bare CEL (``a == b``)."""
        if isinstance(value, bool):
            return value
        if has_expressions(value):
            return self.render(value, field, item)
        return self.expressions.evaluate(value, self._variables(value, item), source=self.source, field=field)


def truthy(value: Any) -> bool:
    """false, null, 0, "" and empty lists and maps are false; "false" too,
    for a guard that interpolates a boolean into text."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false")
    return bool(value)


UNSET = _UNSET
