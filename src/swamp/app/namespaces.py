"""Namespaces of a shared datastore (``swamp datastore namespace ...``).

A namespace is the outermost segment of every key this repository writes
under the bucket and prefix (``<prefix>/<namespace>/log/...``), so several
repositories can share one bucket without seeing each other's data. Each
namespace is a remote of its own, with its own identity, log, blobs and
leases.

- ``list``: the namespaces found under the prefix (one listing);
- ``set NAME``: this checkout joins NAME: its runtime state becomes NAME's
  (refused while changes made here are unpublished, since they would be
  left behind; what lost leases kept aside in ``.sync/lost-lease/`` stays,
  here as on every move, and the result says so);
- ``migrate NAME``: this checkout's runtime state (unpublished changes
  included) is published into NAME, an empty namespace, and the checkout
  moves there; the old namespace is left as it is, for the peers still on it;
- ``unset``: ``set default`` (``--migrate``: ``migrate default``).

Nothing is changed until the target namespace has answered, so a datastore
that is down is an error with everything left as it was. Each step after
that is idempotent: an interrupted command is simply run again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.app.datastore import _hydrate_everything, _remote_identity, reset_sync_state, setup_object_store
from swamp.datastore.cached import store_config
from swamp.datastore.objectstore.factory import open_store
from swamp.datastore.sync import identity
from swamp.datastore.sync.layout import Layout
from swamp.datastore.sync.localonly import is_local_only
from swamp.errors import ConflictError, SwampError, UsageError
from swamp.util.names import check_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo

DEFAULT = "default"


def _shared_config(repo: Repo):
    cfg = repo.config_model().datastore
    if cfg is None or cfg.type == "filesystem":
        raise SwampError("this repository's datastore is a directory; namespaces belong to a shared datastore",
                         code="not_shared", hint="share it first: swamp datastore setup s3|gcs ... --namespace NAME")
    return cfg


def _store(cfg):
    return open_store(store_config(cfg))


def list_namespaces(repo: Repo) -> list[dict]:
    """Every namespace under the bucket and prefix, with its object count and
    bytes, sorted by name; ``current`` marks this checkout's."""
    cfg = _shared_config(repo)
    store = _store(cfg)
    found: dict[str, dict] = {}
    for meta in store.list(""):
        ns, _, rest = meta.key.partition("/")
        if not rest:
            continue
        row = found.setdefault(ns, {"namespace": ns, "current": ns == cfg.namespace, "objects": 0, "bytes": 0,
                                    "swamp": False})
        row["objects"] += 1
        row["bytes"] += meta.size or 0
        if rest in ("format.json", "identity.json"):
            row["swamp"] = True
    rows = [r for r in found.values() if r["swamp"]]  # not the conditional-write probe's _probe/, say
    if cfg.namespace not in {r["namespace"] for r in rows}:
        rows.append({"namespace": cfg.namespace, "current": True, "objects": 0, "bytes": 0, "swamp": False})
    for r in rows:
        del r["swamp"]
    return sorted(rows, key=lambda r: r["namespace"])


def _target_state(cfg, name: str) -> dict:
    """What the namespace ``name`` holds, asked of the store before anything
    changes here (a store that is down raises: nothing changed)."""
    store = _store(cfg)
    layout = Layout(name)
    formatted = store.head(layout.format_key) is not None
    commits = 0
    if formatted:
        for meta in store.list(layout.log_prefix):
            if layout.log_seq(meta.key) is not None:
                commits += 1
                break
    return {"formatted": formatted, "hasCommits": commits > 0, "identity": identity.read(store, layout)}


def set_namespace(repo: Repo, name: str) -> dict:
    """This checkout joins namespace ``name`` (created empty if it has
    nothing yet): what it holds replaces this checkout's runtime state."""
    check_name(name, "namespace")
    cfg = _shared_config(repo)
    if name == cfg.namespace:
        return {"namespace": name, "previous": cfg.namespace, "changed": False, "migrated": False}
    ds = repo.datastore
    dirty = ds.engine.status()["dirtyFiles"]
    if dirty:
        raise ConflictError(f"{len(dirty)} change(s) made here are not published to namespace {cfg.namespace!r} "
                            "and would be left behind",
                            hint=f"publish them first ('swamp datastore sync'), or take them along with "
                                 f"'swamp datastore namespace migrate {name}'")
    target = _target_state(cfg, name)  # the store answers before anything changes
    cache = repo.local_dir
    # Forget the sync state first: from here on, a crash leaves a cache that
    # simply pulls its namespace again (nothing here counts as deleted).
    # What lost leases kept aside (.sync/lost-lease/) stays: it is the only copy.
    ds.engine.close()
    reset_sync_state(cache / ".sync")
    removed = 0
    for rel in sorted(ds.walk()):
        if not is_local_only(rel):
            (cache / rel).unlink(missing_ok=True)
            removed += 1
    _prune_empty_dirs(cache)
    repo.__dict__.pop("datastore", None)
    result = setup_object_store(repo, cfg.model_copy(update={"namespace": name}))
    return {"namespace": name, "previous": cfg.namespace, "changed": True, "migrated": False,
            "created": not target["formatted"], "filesDropped": removed,
            **{k: v for k, v in result.items() if k not in ("namespace", "type", "location", "hydration")}}


def migrate(repo: Repo, name: str) -> dict:
    """Publish this checkout's runtime state into the empty namespace
    ``name`` and move the checkout there. The old namespace is left as it
    is: peers still on it keep working there until they run
    ``namespace set NAME``."""
    check_name(name, "namespace")
    cfg = _shared_config(repo)
    if name == cfg.namespace:
        raise UsageError(f"this repository is already in namespace {name!r}")
    target_cfg = cfg.model_copy(update={"namespace": name})
    target = _target_state(cfg, name)  # the store answers before anything changes
    if target["hasCommits"]:
        marker = repo.local_dir / ".sync" / "remote.json"
        ours = marker.is_file() and marker.read_text() == _remote_identity(target_cfg)
        if not ours:  # else: our own migrate, interrupted after its push; run again
            raise ConflictError(f"namespace {name!r} already holds a datastore",
                                hint=f"join it with 'swamp datastore namespace set {name}', or migrate to "
                                     "another (empty) namespace")
    ds = repo.datastore
    unpublished = len(ds.engine.status()["dirtyFiles"])
    _hydrate_everything(ds)  # a lazy cache fetches every content first: all of it moves
    ds.engine.close()
    repo.__dict__.pop("datastore", None)
    result = setup_object_store(repo, target_cfg)
    return {"namespace": name, "previous": cfg.namespace, "changed": True, "migrated": True,
            "unpublishedCarried": unpublished, "previousLeftIntact": True,
            **{k: v for k, v in result.items() if k not in ("namespace", "type", "location", "hydration")}}


def unset(repo: Repo, *, migrate_state: bool = False) -> dict:
    return migrate(repo, DEFAULT) if migrate_state else set_namespace(repo, DEFAULT)


def _prune_empty_dirs(root) -> None:
    import os

    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if dirpath == str(root):
            continue
        try:
            os.rmdir(dirpath)
        except OSError:
            pass
