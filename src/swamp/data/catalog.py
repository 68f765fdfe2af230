"""The local query catalog: SQLite, one row per data version, for `data
search` and `data query`. Never synced and never the source of truth: it is
rebuilt from the tree when missing, and refreshed per data name whenever the
name's directory (or its newest version directory) changed since it was read."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.data import layout
from swamp.data.repository import DataRepository
from swamp.data.walk import iter_models
from swamp.datastore.base import Datastore

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: local only (under cache/), beside the repository's runtime state
CATALOG = "cache/catalog.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
  model_type TEXT NOT NULL, model_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
  spec_name TEXT, kind TEXT, content_type TEXT, lifetime TEXT, size INTEGER, sha256 TEXT,
  created_at TEXT, tags TEXT, owner TEXT,
  PRIMARY KEY (model_type, model_id, name, version)
);
CREATE TABLE IF NOT EXISTS names (
  dir TEXT PRIMARY KEY, fingerprint TEXT NOT NULL
);
"""


class Catalog:
    def __init__(self, ds: Datastore, db_path: Path) -> None:
        self.ds = ds
        self.data = DataRepository(ds)
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(db_path)
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def _fingerprint(self, name_dir: str) -> str:
        path = self.ds.local_path(name_dir)
        try:
            st = path.stat()
        except FileNotFoundError:
            return ""
        versions = sorted((int(n) for n in os.listdir(path) if n.isdigit()), reverse=True)
        newest = ""
        if versions:
            try:
                newest = str((path / str(versions[0]) / layout.METADATA).stat().st_mtime_ns)
            except FileNotFoundError:
                newest = "incomplete"
        return f"{st.st_mtime_ns}:{versions[0] if versions else 0}:{newest}"

    def refresh(self) -> int:
        """Bring the catalog up to date with the tree; returns names reindexed."""
        known = dict(self.db.execute("SELECT dir, fingerprint FROM names"))
        seen = set()
        changed = 0
        with self.db:
            for model_type, model_id in iter_models(self.ds):
                for name in self.data.names(model_type, model_id):
                    ndir = layout.name_dir(model_type, model_id, name)
                    seen.add(ndir)
                    fp = self._fingerprint(ndir)
                    if known.get(ndir) == fp:
                        continue
                    self._reindex(model_type, model_id, name)
                    self.db.execute("INSERT OR REPLACE INTO names VALUES (?, ?)", (ndir, fp))
                    changed += 1
            for ndir in set(known) - seen:
                _, rest = ndir.split("/", 1)
                model_path, name = rest.rsplit("/", 1)
                model_type, model_id = model_path.rsplit("/", 1)
                self.db.execute("DELETE FROM versions WHERE model_type=? AND model_id=? AND name=?",
                                (model_type, model_id, name))
                self.db.execute("DELETE FROM names WHERE dir=?", (ndir,))
                changed += 1
        return changed

    def _reindex(self, model_type: str, model_id: str, name: str) -> None:
        self.db.execute("DELETE FROM versions WHERE model_type=? AND model_id=? AND name=?",
                        (model_type, model_id, name))
        for rec in self.data.records(model_type, model_id, name):
            m = rec.meta
            self.db.execute(
                "INSERT INTO versions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (model_type, model_id, m.name, m.version, m.specName, m.kind, m.contentType, m.lifetime,
                 m.size, m.sha256, m.createdAt, json.dumps(m.tags, sort_keys=True),
                 json.dumps({k: v for k, v in m.owner.items() if v is not None}, sort_keys=True)))

    def rows(self, *, text: str | None = None, model_id: str | None = None,
             latest_only: bool = False) -> list[dict]:
        sql = "SELECT * FROM versions v"
        where, params = [], []
        if text:
            where.append("(v.name LIKE ? OR v.spec_name LIKE ? OR v.tags LIKE ? OR v.model_type LIKE ?)")
            params += [f"%{text}%"] * 4
        if model_id:
            where.append("v.model_id = ?")
            params.append(model_id)
        if latest_only:
            where.append("v.version = (SELECT MAX(version) FROM versions w WHERE w.model_type=v.model_type "
                         "AND w.model_id=v.model_id AND w.name=v.name)")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY v.model_type, v.model_id, v.name, v.version"
        cur = self.db.execute(sql, params)
        cols = [c[0] for c in cur.description]
        out = []
        for row in cur:
            r = dict(zip(cols, row))
            out.append({
                "modelType": r["model_type"], "modelId": r["model_id"], "name": r["name"],
                "version": r["version"], "specName": r["spec_name"], "kind": r["kind"],
                "contentType": r["content_type"], "lifetime": r["lifetime"], "size": r["size"],
                "sha256": r["sha256"], "createdAt": r["created_at"], "tags": json.loads(r["tags"]),
                "owner": json.loads(r["owner"]),
            })
        return out


#: where the catalog lived before it moved under cache/ (removed on sight:
#: under data/ it would be synced)
_OLD = ("data/_catalog.db", "data/_catalog.db-wal", "data/_catalog.db-shm", "data/_catalog.db-journal")


def open_catalog(repo: Repo) -> Catalog:
    for rel in _OLD:
        with contextlib.suppress(FileNotFoundError):
            (repo.local_dir / rel).unlink()
    return Catalog(repo.datastore, repo.local_dir / CATALOG)
