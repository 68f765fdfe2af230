"""The one bridge from swamp to the expression engine (swamp.expr). Method
arguments in definitions (through ``renderer_for``) and workflows (through
workflows/expressions.Scope) evaluate here, over one repository whose `data`
and `vault` namespaces read that repository. Importing this module registers
those two namespaces with the engine; the engine itself knows neither."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from swamp import expr
from swamp.data import layout, provider as data_namespace
from swamp.data.records import record_json
from swamp.data.repository import DataRepository
from swamp.errors import SwampError
from swamp.models import shell_namespace
from swamp.models.definition_files import find, iter_definition_files, names_by_id
from swamp.models.definitions import load_definition
from swamp.vault import expressions as vault_namespace

if TYPE_CHECKING:
    from swamp.repo.context import Repo



def _probe(provider, name: str, method: str, inputs: dict | None = None):
    if provider is None:
        raise expr.ExpressionError("model.method() runs a probe method: only in a workflow's guard or assert")
    return provider(name, method, dict(inputs or {}))


#: ``model.method(NAME, METHOD[, inputs])``: run a probe method (in a
#: workflow's guard or assert); its first resource's content.
MODEL_NAMESPACE = expr.Namespace("model", (
    expr.Function("method", ("string", "string"), _probe, usage="model.method(name, method[, inputs])"),
    expr.Function("method", ("string", "string", "map"), _probe, usage="model.method(name, method[, inputs])"),
))

for _namespace in (data_namespace.NAMESPACE, vault_namespace.NAMESPACE, MODEL_NAMESPACE, shell_namespace.NAMESPACE):
    expr.register_namespace(_namespace)


class RepoModels:
    """The models of a repository, as the data namespace looks them up."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    def find(self, name_or_id: str):
        return find(self.repo, name_or_id)[1]

    def names_by_id(self) -> dict[str, str]:
        return names_by_id(self.repo)


class Expressions:
    """Expressions over one repository (None: no `data` or `vault` to read).
    With ``cache_data``, `data.*` answers are kept until ``data_changed``
    (a workflow run asks the same things for many steps and items)."""

    def __init__(self, repo: Repo, *, cache_data: bool = False, ephemeral: dict | None = None, probe=None) -> None:
        self.repo = repo
        self._cache_data = cache_data
        self._ephemeral = ephemeral
        #: (model, method, inputs) -> first resource's content, for model.method()
        self._probe = probe
        self._providers: dict[str, Any] | None = None

    def providers(self) -> dict[str, Any]:
        if self._providers is None:
            providers: dict[str, Any] = {}
            if self.repo is not None:
                from swamp.vault.service import RepoVaults  # pydantic, only once something is evaluated

                data = data_namespace.RepoDataProvider(self.repo, RepoModels(self.repo), self._ephemeral)
                providers = {"data": data_namespace.CachedData(data) if self._cache_data else data,
                             "vault": RepoVaults(self.repo), "model": self._probe}
            # Assigned whole: steps evaluate from several threads, and one
            # must never see a half-built table (a namespace "not available").
            self._providers = providers
        return self._providers

    def data_changed(self) -> None:
        """Data was written: what `data.*` answered before may be stale."""
        if self._cache_data and self._providers:
            self._providers["data"].clear()

    def context(self, variables: dict) -> expr.ExprContext:
        return expr.ExprContext(variables, providers=self.providers())

    def render(self, value: Any, variables: dict, *, source: str, field: str) -> Any:
        """``value`` with every ``${{ }}`` evaluated (vault references stay
        sentinels); errors name ``source`` and ``field``."""
        if not expr.has_expressions(value):
            return value
        return expr.render(value, self.context(variables), source=source, field=field)

    def evaluate(self, text: str, variables: dict, *, source: str, field: str) -> Any:
        """One bare CEL expression."""
        return expr.evaluate(text, self.context(variables), source=source, field=field)


def renderer_for(repo: Repo):
    """The renderer of method arguments (models/arguments.Renderer)."""

    def render(value: Any, variables: dict, source: str, field: str) -> Any:
        if not expr.has_expressions(value):
            return value
        text = str(value)
        if "model" in text and "model" not in variables and _MODEL_ROOT.search(text):
            variables = {**variables, "model": model_namespace(repo, data=_reads_model_data(text))}
        return Expressions(repo).render(value, variables, source=source, field=field)

    return render


def validate(value: Any, *, source: str | None = None, field: str | None = None) -> list[expr.ExpressionError]:
    """Compile-only check of every expression in ``value``, knowing the
    `data` and `vault` namespaces."""
    return expr.validate(value, source=source, field=field)


_MODEL_ROOT = re.compile(r"(?<![\w.])model\b")
_MODEL_DATA = re.compile(r"\b(resource|file)\b")


def _reads_model_data(text: str) -> bool:
    return bool(_MODEL_DATA.search(text))


def model_namespace(repo: Repo, *, data: bool = False) -> dict:
    """``model.<name>``: each definition's identity and configuration, as
    ``{id, name, type, version, tags, input: {globalArguments}}``; with
    ``data``, also its latest data by spec and name:
    ``resource.<spec>.<name>`` and ``file.<spec>.<name>`` (each a record
    with ``attributes`` for a resource, ``path``/``size``/``contentType``
    for a file)."""
    out = {}
    for path in iter_definition_files(repo):
        try:
            d = load_definition(path)
        except SwampError:
            continue  # a broken definition fails where it is used, not here
        out[d.name] = {"id": d.id, "name": d.name, "type": d.type, "version": d.version, "tags": d.tags,
                       "input": {"globalArguments": d.globalArguments},
                       "definition": {"id": d.id, "name": d.name, "type": d.type, "version": d.version}}
        if data:
            out[d.name].update(_latest_data(repo, d))
    return out


def _latest_data(repo: Repo, d) -> dict:
    repo_data = DataRepository(repo.datastore)
    found: dict = {"resource": {}, "file": {}}
    for name in sorted(repo_data.names(d.type, d.id)):
        v = repo_data.latest_version(d.type, d.id, name)
        if v is None:
            continue
        rec = repo_data.get(d.type, d.id, name, v)
        kind = rec.meta.kind
        content = repo_data.content(rec) if kind == "resource" else None
        doc = record_json(rec, content)
        if kind == "resource":
            doc["attributes"] = doc.get("content")
        else:
            doc["path"] = str(repo.datastore.local_path(f"{rec.path}/{layout.RAW}"))
        found[kind].setdefault(rec.meta.specName, {})[name] = doc
    return found
