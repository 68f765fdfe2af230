"""Datastore use cases (``swamp datastore ...``): set up where the state
lives (a directory, or a shared object store), and for a shared one its
status, sync, leases, log, verify and gc."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.data import layout
from swamp.datastore.cached import location_of, store_config
from swamp.datastore.filesystem import FilesystemDatastore
from swamp.datastore.objectstore.buckets import ensure_bucket
from swamp.datastore.objectstore.factory import open_store
from swamp.datastore.objectstore.probe import probe_conditional_writes
from swamp.datastore.sync.counts import SyncCounts
from swamp.datastore.sync.engine import SyncEngine
from swamp.datastore.sync.localonly import is_local_only
from swamp.errors import NotFoundError, SwampError, SyncConflictError
from swamp.repo.datastores import path_rules
from swamp.util.atomic import atomic_write, sweep_temp_files

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def setup_filesystem(repo: Repo, path: str) -> dict:
    """Point the repository at a directory datastore. Existing state is
    copied there first (files already present are kept), and only then is
    .swamp.yaml changed, so an interrupted setup can simply be rerun."""
    target_root = Path(path)
    if not target_root.is_absolute():
        target_root = (Path.cwd() / target_root).absolute()
    source = repo.datastore
    _hydrate_everything(source)
    target = FilesystemDatastore(target_root)
    copied, kept, nbytes = 0, 0, 0
    if source.root.resolve() != target.root.resolve():
        for rel in source.walk():
            if is_local_only(rel):
                continue
            if target.exists(rel):
                kept += 1
                continue
            data = source.read_bytes(rel)
            target.write_bytes(rel, data)
            copied += 1
            nbytes += len(data)
    from swamp.repo.config import DatastoreConfig  # pydantic: not on a sync's path

    cfg = repo.config_model().model_copy(update={"datastore": DatastoreConfig(type="filesystem", path=str(target_root))})
    repo.save_config(cfg)
    repo.__dict__.pop("datastore", None)
    return {"type": "filesystem", "location": str(target_root), "filesCopied": copied,
            "filesKept": kept, "bytesCopied": nbytes}


def _hydrate_everything(source) -> None:
    """A lazily hydrated cache holds data contents (``raw``) only once read:
    fetch every one still missing, so the directory datastore gets them all
    (whether it is the cache itself or somewhere else)."""
    if getattr(source, "engine", None) is None:
        return

    suffix = "/" + layout.METADATA
    for rel in list(source.walk(layout.DATA_ROOT)):
        raw = rel[: -len(suffix)] + "/" + layout.RAW if rel.endswith(suffix) else None
        if raw is not None and not source.exists(raw):
            try:
                source.read_bytes(raw)  # hydrates it
            except NotFoundError:
                pass


def current_location(repo: Repo) -> str:
    """Where the repository's datastore is now, as `datastore status` names it."""
    cfg = repo.config_model().datastore
    if cfg is None or cfg.type == "filesystem":
        return str(repo.datastore.root) if cfg is None or not cfg.path else cfg.path
    return location_of(cfg)


def object_store_config(**fields):
    """The datastore section `datastore setup s3|gcs` writes, from the
    fields a person gave (validated as .swamp.yaml's schema validates it)."""
    from swamp.repo.config import DatastoreConfig

    return DatastoreConfig(**fields)


def setup_object_store(repo: Repo, cfg, *, progress=None, create_bucket: bool = False) -> dict:
    """Share this repository's datastore through an object store: probe the
    backend's conditional writes (refused if it ignores them), attach to the
    remote's identity, publish local state, hydrate from the remote, and
    only then write the datastore section of .swamp.yaml. Every step is
    idempotent: a setup that failed half-way is simply run again. It is
    also how a repository attaches again to a remote its commands refuse as
    another one (RemoteChangedError)."""
    previous = current_location(repo)
    store = open_store(store_config(cfg))
    created = ensure_bucket(store, create=create_bucket)  # before any write could create it
    probe_conditional_writes(store)
    cache = repo.local_dir
    copied = _copy_into_cache(repo, cache)
    _claim_sync_state(repo, cache, cfg)
    engine = SyncEngine(store, cache, rules=path_rules(), namespace=cfg.namespace, hydration=cfg.hydration)
    engine.on_progress = progress
    try:
        engine.init_remote()
        # The remote's identity (written now if it has none): a cache whose
        # state describes another remote, or one emptied or reset since,
        # forgets that state, so the full push below republishes what the
        # remote lacks instead of skipping it as uploaded before.
        # Copies of other peers' work are recorded first, and only this
        # peer's own work is republished (sync/origin.py).
        engine.attach_remote()
        counts = engine.pull()
        aside = engine.set_aside_copies()
        counts.add(engine.push(command="datastore setup", full_walk=True, wait_for_leases=True))
    finally:
        engine.close()
    repo.save_config(repo.config_model().model_copy(update={"datastore": cfg}))
    repo.__dict__.pop("datastore", None)
    return {"type": cfg.type, "from": previous, "location": location_of(cfg), "namespace": cfg.namespace,
            "hydration": cfg.hydration, "bucketCreated": created, "filesCopied": copied,
            **lost_lease_kept(cache / ".sync"), **aside, **counts.to_json()}


def _remote_identity(cfg) -> str:
    return json.dumps({"type": cfg.type, "endpointUrl": cfg.endpointUrl or "", "bucket": cfg.bucket,
                       "prefix": (cfg.prefix or "").strip("/"), "namespace": cfg.namespace}, sort_keys=True)


def _claim_sync_state(repo: Repo, cache: Path, cfg) -> None:
    """The sync state in ``.sync/`` (head, bases) describes one remote. Set
    up onto another (bucket, prefix, namespace or server), it would make the
    new remote look as if it already held everything: start it afresh, as a
    new peer. The remote it belongs to is recorded before the engine touches
    it, so a setup killed half-way and rerun keeps its progress."""
    sync_dir = cache / ".sync"
    marker = sync_dir / "remote.json"
    wanted = _remote_identity(cfg)
    try:
        recorded = marker.read_text()
    except FileNotFoundError:
        current = repo.config.datastore
        # State from before the marker existed: it belongs to the configured
        # remote, if any.
        recorded = (_remote_identity(current) if current is not None and current.type != "filesystem"
                    else wanted)
    if recorded != wanted and sync_dir.exists():
        reset_sync_state(sync_dir)
    sync_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(marker, wanted.encode())


#: under ``.sync/``: what was written under a lost lease, kept aside (sync.md
#: "Nothing written under a lost lease is published"); it exists nowhere else
LOST_LEASE = "lost-lease"


def reset_sync_state(sync_dir: Path) -> int:
    """Forget the sync state in ``sync_dir`` (the cache then starts as a new
    peer of whatever remote it attaches to) but keep ``lost-lease/``: the
    work a lost lease kept aside is the only copy, and the command that lost
    it told the user to look there. Returns how many folders it holds."""
    if sync_dir.is_dir():
        for entry in sorted(sync_dir.iterdir()):
            if entry.name == LOST_LEASE:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)
    return lost_lease_kept(sync_dir)["lostLeaseFolders"]


def lost_lease_kept(sync_dir: Path) -> dict:
    """``{"lostLeaseFolders", "lostLeaseDir"}``: the folders of work kept
    aside under lost leases (0 and None when there are none), for a result
    that says so."""
    kept = sync_dir / LOST_LEASE
    try:
        folders = sum(1 for _ in kept.iterdir())
    except OSError:
        folders = 0
    return {"lostLeaseFolders": folders, "lostLeaseDir": str(kept) if folders else None}


def _copy_into_cache(repo: Repo, cache: Path) -> int:
    """State kept in an external filesystem datastore moves into the cache
    before it is published (files already in the cache are kept)."""
    source = repo.datastore
    if source.kind != "filesystem" or source.root.resolve() == cache.resolve():
        return 0
    target = FilesystemDatastore(cache)
    copied = 0
    for rel in source.walk():
        if not is_local_only(rel) and not target.exists(rel):
            target.write_bytes(rel, source.read_bytes(rel))
            copied += 1
    return copied


def status(repo: Repo) -> dict:
    ds = repo.datastore
    out = {"type": ds.kind, "location": str(ds.root), "namespace": None, "head": 0, "dirtyFiles": 0}
    out.update(ds.status())
    return out


def sync(repo: Repo, *, pull: bool, push: bool, progress=None) -> dict:
    ds = repo.datastore
    if not hasattr(ds, "sync"):
        return SyncCounts().to_json()  # a filesystem datastore has nothing to sync

    try:
        return ds.sync(pull=pull, push=push, progress=progress).to_json()
    except SyncConflictError as e:
        return e.counts.to_json()  # the report lists the conflicts; the CLI exits 1


def lock_status(repo: Repo) -> list[dict]:
    return sorted(repo.datastore.lock_status(), key=lambda r: r["name"])


def lock_release(repo: Repo, name: str) -> dict:
    return {"name": name, "released": repo.datastore.force_release(name)}


def _engine(repo: Repo):
    ds = repo.datastore
    engine = getattr(ds, "engine", None)
    if engine is None:
        raise SwampError("this repository's datastore is a directory; it has no shared history",
                         code="not_shared", hint="share it first: swamp datastore setup s3|gcs ...")
    return engine


def history(repo: Repo, limit: int | None) -> list[dict]:
    return _engine(repo).log(limit)


def verify(repo: Repo) -> dict:
    return _engine(repo).verify()


def collect(repo: Repo, *, retention_days: float, dry_run: bool) -> dict:
    return _engine(repo).gc(retention_days, dry_run=dry_run)


# ------------------------------------------------------------ administration
#: the datastore types swamp ships: type -> (description, what `setup` needs, extra to install)
DATASTORE_TYPES = {
    "filesystem": ("A directory: .swamp/ (the default) or a path shared by several processes, on one machine or "
                   "a network filesystem; nothing to sync", "swamp datastore setup filesystem --path DIR", None),
    "gcs": ("Google Cloud Storage (or a GCS emulator): shared by a team through a bucket, synced with the local "
            "cache", "swamp datastore setup gcs --bucket NAME [--prefix P] [--namespace N]", "gcs"),
    "s3": ("Amazon S3 or an S3-compatible server that enforces conditional writes (SeaweedFS, MinIO, R2): shared "
           "by a team through a bucket, synced with the local cache",
           "swamp datastore setup s3 --bucket NAME [--prefix P] [--namespace N] [--endpoint-url URL]", None),
}


def type_search(query: str | None = None) -> list[dict]:
    """The datastore types available, whose name or description contains
    ``query``; sorted by type. (Extensions provide model types only: no
    datastore type comes from an extension.)"""
    import importlib.util

    q = (query or "").lower()
    rows = []
    for name, (description, setup, extra) in sorted(DATASTORE_TYPES.items()):
        if q and q not in name and q not in description.lower():
            continue
        available = True
        if extra == "gcs":
            try:
                available = importlib.util.find_spec("google.cloud.storage") is not None
            except (ImportError, ValueError):
                available = False
        rows.append({"type": name, "description": description, "setup": setup, "source": "builtin",
                     "available": available, "install": None if available else f"pip install 'swamp[{extra}]'"})
    return rows


def _sizes(paths) -> int:
    total = 0
    for p in paths:
        for f in (p, p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")):
            try:
                total += f.stat().st_size
            except OSError:
                pass
    return total


def _vacuum(path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def compact(repo: Repo) -> dict:
    """Compact what is local and can be: the query catalog (SQLite VACUUM),
    the sync state of a shared datastore (checkpoint its write-ahead log and
    VACUUM, with every sync step of this cache held off meanwhile), and the
    temp files of writers killed mid-write. Sizes measured before and after;
    nothing shared is touched."""
    import contextlib

    from swamp.data.catalog import CATALOG  # here: a pull (which imports this module) needs no catalog

    ds = repo.datastore
    parts = []
    catalog = repo.local_dir / CATALOG
    if catalog.is_file():
        before = _sizes([catalog])
        _vacuum(catalog)
        parts.append({"part": "catalog", "path": str(catalog), "bytesBefore": before, "bytesAfter": _sizes([catalog])})
    engine = getattr(ds, "engine", None)
    state_db = repo.local_dir / ".sync" / "state.db"
    if engine is not None and state_db.is_file():
        before = _sizes([state_db])
        with engine.exclusive():
            _vacuum(state_db)
        parts.append({"part": "sync-state", "path": str(state_db), "bytesBefore": before,
                      "bytesAfter": _sizes([state_db])})
    with contextlib.suppress(OSError):
        removed = sweep_temp_files(ds.root)
        parts.append({"part": "temp-files", "path": str(ds.root), "bytesBefore": None, "bytesAfter": None,
                      "removed": removed})
    measured = [p for p in parts if p["bytesBefore"] is not None]
    return {"parts": sorted(parts, key=lambda p: p["part"]),
            "bytesBefore": sum(p["bytesBefore"] for p in measured),
            "bytesAfter": sum(p["bytesAfter"] for p in measured)}
