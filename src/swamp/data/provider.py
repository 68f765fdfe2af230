"""The `data` namespace of expressions (`data.latest(model, name)` and the
rest) over a repository. Each record is a plain map {id, name, version,
specName, kind, createdAt, size, tags, model, content, attributes}. Models
are found through a lookup the caller passes: data knows models by id, the
definitions that name them live above it."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

from swamp.data.records import record_json
from swamp.data.repository import DataRecord, DataRepository
from swamp.data.search import catalog_rows, matching
from swamp.errors import ExpressionError, NotFoundError
from swamp.expr import Function, Namespace

if TYPE_CHECKING:
    from swamp.repo.context import Repo


class DataProvider(Protocol):
    """Serves `data.*` during evaluation; a missing record is None."""

    def latest(self, model: str, name: str) -> dict | None: ...

    def version(self, model: str, name: str, version: int) -> dict | None: ...

    def list_versions(self, model: str, name: str) -> list[int]: ...

    def find_by_spec(self, model: str, spec: str) -> list[dict]: ...

    def find_by_tag(self, key: str, value: str) -> list[dict]: ...

    def query(self, predicate: str, select: str | None = None) -> list: ...


class ModelLookup(Protocol):
    def find(self, name_or_id: str) -> Any:
        """The model (with ``type``, ``id`` and ``name``); raises NotFoundError."""

    def names_by_id(self) -> dict[str, str]: ...


def _function(cel_name: str, method: str, params: tuple[str, ...], usage: str) -> Function:
    def call(provider: DataProvider | None, *args: Any) -> Any:
        if provider is None:
            raise ExpressionError(f"data.{cel_name}() is not available here")
        return getattr(provider, method)(*args)

    return Function(cel_name, params, call, usage=usage)


_LATEST = "data.latest(model, name[, varyValues])"
_VERSION = "data.version(model, name[, varyValues], version)"
_VERSIONS = "data.listVersions(model, name[, varyValues])"

NAMESPACE = Namespace("data", (
    _function("latest", "latest", ("string", "string"), _LATEST),
    _function("latest", "latest", ("string", "string", "list"), _LATEST),
    _function("version", "version", ("string", "string", "int"), _VERSION),
    _function("version", "version_varied", ("string", "string", "list", "int"), _VERSION),
    _function("listVersions", "list_versions", ("string", "string"), _VERSIONS),
    _function("listVersions", "list_versions", ("string", "string", "list"), _VERSIONS),
    _function("findBySpec", "find_by_spec", ("string", "string"), "data.findBySpec(model, spec)"),
    _function("findByTag", "find_by_tag", ("string", "string"), "data.findByTag(key, value)"),
    _function("query", "query", ("string",), "data.query(predicate[, select])"),
    _function("query", "query", ("string", "string"), "data.query(predicate[, select])"),
))

# Enough for any expression; a bound keeps a runaway query finite.
_LIMIT = 10_000


def varied(name: str, dims: list | None) -> str:
    """The data name a step's ``vary`` values give: ``result`` and
    ``["prod"]`` -> ``result-prod``."""
    return name + "".join(f"-{str(d).lower() if isinstance(d, bool) else d}" for d in dims or [])


class RepoDataProvider:
    """Reads inside the caller's session: an evaluation never pulls.
    ``ephemeral`` holds a workflow run's ephemeral data ({(model id, name):
    record}), seen before what is stored."""

    def __init__(self, repo: Repo, models: ModelLookup, ephemeral: dict | None = None) -> None:
        self.repo = repo
        self.models = models
        self._data = DataRepository(repo.datastore)
        self._ephemeral = ephemeral if ephemeral is not None else {}

    def _record(self, d, rec: DataRecord) -> dict:
        out = record_json(rec, self._data.content(rec))
        out["model"] = d.name
        out["id"] = rec.meta.id
        if isinstance(out.get("content"), dict):
            out["attributes"] = out["content"]
        return out

    def latest(self, model: str, name: str, dims: list | None = None) -> dict | None:
        d = self.models.find(model)
        name = varied(name, dims)
        if (d.id, name) in self._ephemeral:
            return self._ephemeral[(d.id, name)]
        try:
            return self._record(d, self._data.get(d.type, d.id, name))
        except NotFoundError:
            return None

    def version(self, model: str, name: str, version: int) -> dict | None:
        d = self.models.find(model)
        try:
            return self._record(d, self._data.get(d.type, d.id, name, int(version)))
        except NotFoundError:
            return None

    def version_varied(self, model: str, name: str, dims: list, version: int) -> dict | None:
        return self.version(model, varied(name, dims), version)

    def list_versions(self, model: str, name: str, dims: list | None = None) -> list[int]:
        """The version numbers, ascending (compare with ``[1, 2, 3]``)."""
        d = self.models.find(model)
        return self._data.versions(d.type, d.id, varied(name, dims))

    def find_by_spec(self, model: str, spec: str) -> list[dict]:
        d = self.models.find(model)
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
        out = []
        for row in catalog_rows(self.repo, self.models.names_by_id())[:_LIMIT]:
            if row["tags"].get(key) == value:
                d = self.models.find(row["modelId"])
                out.append(self._record(d, self._data.get(d.type, d.id, row["name"], row["version"])))
        return out

    def query(self, predicate: str, select: str | None = None) -> list:
        rows = matching(catalog_rows(self.repo, self.models.names_by_id()), predicate, _LIMIT, self.repo)
        return [r.get(select) for r in rows] if select else rows


class CachedData:
    """``data.*`` answers cached per call (a forEach over many items asks the
    same thing many times); ``clear`` whenever data may have changed."""

    def __init__(self, provider) -> None:
        self._provider = provider
        self._cache: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def __getattr__(self, method: str):
        fn = getattr(self._provider, method)

        def call(*args):
            key = (method, *(tuple(a) if isinstance(a, list) else a for a in args))
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
            value = fn(*args)
            with self._lock:
                self._cache[key] = value
            return value

        return call

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
