"""Late secret resolution. Expressions leave vault references as sentinels;
they become values only here, when a method runs, and every value resolved
is registered with the redactor first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel
    from swamp.repo.context import Repo


def _lookup(repo: Repo):
    from swamp.vault.service import RepoVaults

    return RepoVaults(repo).get


def resolve(repo: Repo, value: Any) -> Any:
    from swamp.vault import sentinel

    if not sentinel.find_sentinels(value):
        return value
    return sentinel.resolve_sentinels(value, _lookup(repo))


def resolve_arguments(repo: Repo, args: BaseModel, passthrough: set[str]) -> BaseModel:
    """Resolve vault references in every argument except those the type
    resolves itself."""
    from swamp.vault import sentinel

    data = dict(args)
    updates = {k: resolve(repo, v) for k, v in data.items()
               if k not in passthrough and sentinel.find_sentinels(v)}
    if not updates:
        return args
    if isinstance(args, dict):  # arguments read on the fast path (util/fast_schema.Arguments)
        return type(args)({**args, **updates})
    return args.model_copy(update=updates)


def shell_env(repo: Repo, command: str) -> tuple[str, dict[str, str]]:
    """Replace vault references in a shell command by environment variable
    references; return the command and the variables to set."""
    from swamp.vault import sentinel

    if not sentinel.find_sentinels(command):
        return command, {}
    return sentinel.to_env(command, None, _lookup(repo))
