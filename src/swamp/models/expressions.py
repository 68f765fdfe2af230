"""The bridge from definitions to the expression engine (swamp.expr): a
renderer bound to one repository, whose data and vault namespaces read that
repository."""

from __future__ import annotations

from typing import Any


def renderer_for(repo):
    def render(value: Any, variables: dict, source: str, field: str) -> Any:
        if not _mentions_expression(value):
            return value  # the common case: no need to load the CEL engine
        from swamp.expr import api as expr

        ctx = expr.ExprContext(variables=variables, data=_data_provider(repo), vault=_vault_provider(repo))
        return expr.render(value, ctx, source=source, field=field)

    return render


def _data_provider(repo):
    if repo is None:
        return None
    from swamp.data.provider import RepoDataProvider

    return RepoDataProvider(repo)


def _vault_provider(repo):
    if repo is None:
        return None
    from swamp.vault.service import RepoVaults

    return RepoVaults(repo)


def _mentions_expression(value: Any) -> bool:
    if isinstance(value, str):
        return "${{" in value
    if isinstance(value, dict):
        return any(_mentions_expression(k) or _mentions_expression(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_mentions_expression(v) for v in value)
    return False
