"""Configuring where a repository's runtime state lives: `datastore setup`,
`status`, `sync` and lock administration."""

from __future__ import annotations

from pathlib import Path

from swamp.datastore.base import SyncCounts, is_local_only


def setup_filesystem(repo, path: str) -> dict:
    """Point the repository at a directory datastore. Existing state is
    copied there first (files already present are kept), and only then is
    .swamp.yaml changed, so an interrupted setup can simply be rerun."""
    from swamp.datastore.filesystem import FilesystemDatastore
    from swamp.repo.config import DatastoreConfig

    target_root = Path(path)
    if not target_root.is_absolute():
        target_root = (Path.cwd() / target_root).absolute()
    source = repo.datastore
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
    cfg = repo.config.model_copy(update={"datastore": DatastoreConfig(type="filesystem", path=str(target_root))})
    repo.save_config(cfg)
    repo.__dict__.pop("datastore", None)
    return {"type": "filesystem", "location": str(target_root), "filesCopied": copied,
            "filesKept": kept, "bytesCopied": nbytes}


def status(repo) -> dict:
    ds = repo.datastore
    out = {"type": ds.kind, "location": str(ds.root), "namespace": None, "head": 0, "dirtyFiles": 0}
    out.update(ds.status())
    return out


def sync(repo, *, pull: bool, push: bool) -> dict:
    ds = repo.datastore
    if not hasattr(ds, "sync"):
        return SyncCounts().to_json()  # a filesystem datastore has nothing to sync
    return ds.sync(pull=pull, push=push).to_json()


def lock_status(repo) -> list[dict]:
    return sorted(repo.datastore.lock_status(), key=lambda r: r["name"])


def lock_release(repo, name: str) -> dict:
    return {"name": name, "released": repo.datastore.force_release(name)}
