"""Opening a repository's datastore, with the path rules its owners
declare. The datastore commands (setup, status, sync, locks, log, verify,
gc) are use cases of the application layer: swamp.app.datastore."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swamp.repo.context import Repo



def path_rules():
    """How each path of a shared datastore syncs, as its owner declares it:
    the one place the declarations are put together for the sync engine."""
    from swamp.data.sync_rules import SYNC_RULES as data
    from swamp.datastore.sync.rules import PathRules
    from swamp.extensions.sync_rules import SYNC_RULES as extensions
    from swamp.models.sync_rules import SYNC_RULES as models
    from swamp.repo.sync_rules import SYNC_RULES as settings
    from swamp.workflows.sync_rules import SYNC_RULES as workflows

    return PathRules.of(data, models, workflows, settings, extensions)


def open_datastore(repo: Repo):
    """The datastore the repository is configured for."""
    from swamp.datastore.open import open_datastore as open_configured

    # The rules only when the datastore is shared: the filesystem datastore
    # has nothing to sync, and compiling them costs every command ~2 ms.
    ds = open_configured(repo, path_rules)
    if repo.managed_config and hasattr(ds, "before_pull"):
        from swamp.repo.config_bases import watch

        watch(repo, ds)
    return ds
