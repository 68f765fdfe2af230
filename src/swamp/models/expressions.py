"""The bridge from definitions to the expression engine (swamp.expr): a
renderer bound to one repository, whose data and vault namespaces read that
repository."""

from __future__ import annotations

from typing import Any


def renderer_for(repo):
    def render(value: Any, variables: dict, source: str, field: str) -> Any:
        from swamp.expr import ExprContext, has_expressions, render as render_expr  # CEL loads on first use

        if not has_expressions(value):
            return value
        ctx = ExprContext(variables=variables, data=_data_provider(repo), vault=_vault_provider(repo))
        return render_expr(value, ctx, source=source, field=field)

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

