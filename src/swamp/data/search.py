"""Searching data versions through the local catalog, for `data search`,
`data query` and the expressions' `data.findByTag` and `data.query`. The
caller holds the session (or runs inside one) and names the models: data
knows model ids, not the definitions that name them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from swamp.expr import predicate as compile_predicate

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: the variables of a `data query` predicate: the fields of a row
QUERY_FIELDS = ("model", "modelName", "modelType", "modelId", "name", "version", "specName", "kind",
                "contentType", "lifetime", "size", "sha256", "createdAt", "tags", "owner",
                "content", "attributes")  # the last two read only when named (query_content.py)


def catalog_rows(repo: Repo, model_names: Mapping[str, str], *, text: str | None = None,
                 model_id: str | None = None, all_versions: bool = False) -> list[dict]:
    """Versions (latest only unless ``all_versions``) whose name, spec, type
    or tags contain ``text``, each with its model's name (from
    ``model_names``, by id), sorted by model, name and version."""
    from swamp.data.catalog import open_catalog  # sqlite3 only when searching

    cat = open_catalog(repo)
    try:
        cat.refresh()
        rows = cat.rows(text=text, model_id=model_id, latest_only=not all_versions)
    finally:
        cat.close()
    for r in rows:
        r["model"] = r["modelName"] = model_names.get(r["modelId"], r["modelId"])  # modelName: upstream's word
    return sorted(rows, key=lambda r: (r["model"], r["name"], r["version"]))


def matching(rows: list[dict], predicate: str, limit: int, repo: Repo | None = None) -> list[dict]:
    """The first ``limit`` rows for which the CEL ``predicate`` is true; a
    row lacking a key it reads (a tag only some versions carry) is not one
    (upstream's data query matches the rows that have it). With ``repo``, a
    predicate naming ``content`` or ``attributes`` sees each version's
    content (query_content.py); the rows returned do not carry it."""
    from swamp.data.query_content import content_reader, names_content

    test = compile_predicate(predicate, QUERY_FIELDS, source="data query", missing_is_false=True)
    content = content_reader(repo) if repo is not None and names_content(predicate) else None
    if content is not None:
        test = _shape_tolerant(test, content)
    out = []
    for r in rows:
        if test(r):
            out.append(r)
            if len(out) >= limit:
                break
    if content is not None:
        test.raise_if_never_evaluated()
    return out


def _shape_tolerant(test, content):
    """Contents differ in shape (a map here, a log's text there): a version
    whose content the predicate cannot read as it asks does not match. When
    no version could be read, the first error is the answer (a predicate
    wrong for everything says so)."""
    from swamp.errors import ExpressionError

    state = {"evaluated": False, "error": None}

    def tolerant(row: dict) -> bool:
        try:
            result = test({**row, **content(row)})
        except ExpressionError as e:
            state["error"] = state["error"] or e
            return False
        state["evaluated"] = True
        return result

    def raise_if_never_evaluated() -> None:
        if not state["evaluated"] and state["error"] is not None:
            raise state["error"]

    tolerant.raise_if_never_evaluated = raise_if_never_evaluated
    return tolerant
