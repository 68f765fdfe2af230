"""Data's version scheme for renumbering (declared in ``sync_rules.py``,
applied by ``swamp.datastore.sync.renumber``): a version of ours that a
peer's version of the same number beat to publication moves to the next
free number, and what names it follows:

- its ``metadata.yaml`` (the ``version`` field);
- the output record of the method run that wrote it (``owner.outputId``):
  its ``dataArtifacts`` entry;
- the workflow run record of the run it was written in
  (``owner.workflowRunId``): the ``dataArtifacts`` entry of that step.

A record is found through the owner the metadata names; one that is not
here (written elsewhere) is left alone."""

from __future__ import annotations

import json
from typing import Any, Iterable

from swamp.data import layout
from swamp.util import yamlio


class DataVersions:
    def split(self, rel: str) -> tuple[str, int] | None:
        """``data/<type...>/<modelId>/<name>/<version>/<file...>``: a type has
        at least two segments and a name one, so the version is the first
        all-digit segment from the fifth on, with a file under it."""
        segs = rel.split("/")
        if len(segs) < 6 or segs[0] != layout.DATA_ROOT:
            return None
        for i in range(4, len(segs) - 1):
            if segs[i].isdigit():
                return "/".join(segs[:i]), int(segs[i])
        return None

    def lease(self, versions: str) -> str:
        """The lease the versions of ``versions`` (``data/<type...>/<modelId>/<name>``)
        are allocated under: their model's, ``model/<type...>/<modelId>``
        (layout.model_lease, which ``swamp.models.leases`` names too). The
        sync engine publishes a new version only under it
        (``swamp.datastore.sync.publishing``)."""
        model_type, model_id = versions.split("/", 1)[1].rsplit("/", 2)[:2]
        return layout.model_lease(model_type, model_id)

    def rewrite(self, files, versions: str, old: int, new: int) -> Iterable[str]:
        name = versions.rsplit("/", 1)[-1]
        meta_rel = f"{versions}/{new}/{layout.METADATA}"
        meta = _metadata(files, meta_rel)
        if meta is None:
            return []
        from swamp.util import yamlio

        meta["version"] = new
        files.write(meta_rel, yamlio.dumps(meta).encode())
        changed = [meta_rel]
        output_id = (meta.get("owner") or {}).get("outputId")
        for rel, in_run in _records(files, meta):
            if _follow(files, rel, name, old, new, output_id if in_run else None):
                changed.append(rel)
        return changed

    def names(self, files, versions: str, version: int) -> list[str]:
        """The records that name version ``version`` of ``versions``: the
        output record of the run that wrote it, that step's workflow run
        record. A version the engine may not publish yet is held back with
        them (``swamp.datastore.sync.publishing``)."""
        meta = _metadata(files, f"{versions}/{version}/{layout.METADATA}")
        return [] if meta is None else [rel for rel, _in_run in _records(files, meta)]


def _metadata(files, rel: str) -> dict | None:
    raw = files.read(rel)
    if raw is None:
        return None

    meta = yamlio.loads(raw.decode(), rel)
    return meta if isinstance(meta, dict) else None


def _records(files, meta: dict) -> list[tuple[str, bool]]:
    """(path, whether it is a workflow run record) of the records here that
    the version's owner names."""
    owner = meta.get("owner") or {}
    out = []
    output_id = owner.get("outputId")
    if output_id and owner.get("modelType") and owner.get("definitionId") and owner.get("methodName"):
        folder = f"outputs/{owner['modelType']}/{owner['definitionId']}/{owner['methodName']}"
        out += [(rel, False) for rel in files.files(folder) if rel.endswith(f"-{output_id}.yaml")]
    run_id = owner.get("workflowRunId")
    if run_id:
        out += [(rel, True) for rel in files.files("workflow-runs") if rel.endswith(f"/workflow-run-{run_id}.yaml")]
    return out


def _follow(files, rel: str, name: str, old: int, new: int, output_id: str | None) -> bool:
    """Point the record's ``dataArtifacts`` entries for ``name`` at version
    ``old`` to ``new`` (in a run record: those of the step that ran
    ``output_id``). Written as it was: JSON stays JSON."""
    raw = files.read(rel)
    if raw is None:
        return False
    text = raw.decode()
    try:
        doc, as_json = json.loads(text), True
    except ValueError:
        from swamp.util import yamlio

        doc, as_json = yamlio.loads(text, rel), False
    if not isinstance(doc, dict):
        return False
    holders: list[dict[str, Any]] = [doc] if output_id is None else [
        step for job in doc.get("jobs") or [] for step in job.get("steps") or []
        if isinstance(step, dict) and step.get("outputId") == output_id]
    hit = False
    for holder in holders:
        for a in holder.get("dataArtifacts") or []:
            if isinstance(a, dict) and a.get("name") == name and a.get("version") == old:
                a["version"] = new
                hit = True
    if hit:
        if as_json:
            out = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        else:
            out = yamlio.dumps(doc)
        files.write(rel, out.encode())
    return hit


#: the scheme the sync engine applies (named in sync_rules.py)
VERSIONS = DataVersions()
