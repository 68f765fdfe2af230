"""The expression engine's `data.*` namespace over a repository: each
record is a plain map {id, name, version, specName, kind, createdAt, size,
tags, model, content, attributes}."""

from __future__ import annotations

from swamp.data.repository import DataRecord, DataRepository
from swamp.errors import NotFoundError


class RepoDataProvider:
    def __init__(self, repo) -> None:
        self.repo = repo
        self._data = DataRepository(repo.datastore)

    def _model(self, model: str):
        from swamp.models.definition_files import find

        return find(self.repo, model)[1]

    def _record(self, d, rec: DataRecord) -> dict:
        from swamp.data.service import record_json

        out = record_json(rec, self._data.content(rec))
        out["model"] = d.name
        out["id"] = rec.meta.id
        if isinstance(out.get("content"), dict):
            out["attributes"] = out["content"]
        return out

    def latest(self, model: str, name: str) -> dict | None:
        d = self._model(model)
        try:
            return self._record(d, self._data.get(d.type, d.id, name))
        except NotFoundError:
            return None

    def version(self, model: str, name: str, version: int) -> dict | None:
        d = self._model(model)
        try:
            return self._record(d, self._data.get(d.type, d.id, name, int(version)))
        except NotFoundError:
            return None

    def list_versions(self, model: str, name: str) -> list[dict]:
        d = self._model(model)
        return [self._record(d, r) for r in self._data.records(d.type, d.id, name)]

    def find_by_spec(self, model: str, spec: str) -> list[dict]:
        d = self._model(model)
        out = []
        for name in self._data.names(d.type, d.id):
            v = self._data.latest_version(d.type, d.id, name)
            if v is None:
                continue
            rec = self._data.get(d.type, d.id, name, v)
            if rec.meta.specName == spec:
                out.append(self._record(d, rec))
        return out

    def find_by_tag(self, key: str, value: str) -> list[dict]:
        from swamp.data.service import search_data

        out = []
        for row in search_data(self.repo, None, limit=10_000, sync=False):
            if row["tags"].get(key) == value:
                d = self._model(row["modelId"])
                out.append(self._record(d, self._data.get(d.type, d.id, row["name"], row["version"])))
        return out

    def query(self, predicate: str, select: str | None = None) -> list:
        from swamp.data.service import query_data

        rows = query_data(self.repo, predicate, limit=10_000, sync=False)
        return [r.get(select) for r in rows] if select else rows
