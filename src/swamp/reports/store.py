"""Where a report lives: a version of data named ``report-<report>``.

A method run's reports are data of its model (written under the model's
lease, in the run's own session). A workflow run's reports are data of the
workflow, filed under the owner type ``swamp/workflow`` and the workflow's
id (written under that owner's lease). Each version holds one JSON
document: the report's markdown and JSON, or its failure."""

from __future__ import annotations

import json

from swamp.data.repository import DataRecord, DataRepository
from swamp.errors import NotFoundError
from swamp.util import clock
from swamp.util.ids import new_id

#: the owner type a workflow's reports are filed under
WORKFLOW_OWNER = "swamp/workflow"
PREFIX = "report-"
SPEC = "report"
CONTENT_TYPE = "application/json"


def data_name(report: str) -> str:
    return f"{PREFIX}{report}"


def write(data: DataRepository, doc: dict, *, owner_type: str, owner_id: str, owner_name: str,
          method: str | None = None, output_id: str | None = None, workflow_run_id: str | None = None,
          workflow_name: str | None = None) -> DataRecord:
    run_id = output_id or workflow_run_id or ""
    meta = {
        "id": new_id(), "name": data_name(doc["report"]), "specName": SPEC, "kind": "file",
        "contentType": CONTENT_TYPE, "lifetime": "infinite", "garbageCollection": None,
        "tags": {"type": "report", "report": doc["report"], "scope": doc["scope"], "status": doc["status"],
                 "runId": run_id, "runStatus": doc.get("runStatus") or ""},
        "owner": {"definitionId": owner_id, "definitionName": owner_name, "modelType": owner_type,
                  "methodName": method, "outputId": output_id, "workflowRunId": workflow_run_id,
                  "workflowName": workflow_name},
        "createdAt": clock.isoformat(),
    }
    content = json.dumps(doc, indent=2, sort_keys=True, default=str).encode()
    return data.write(owner_type, owner_id, meta, content)


def is_report(record: DataRecord) -> bool:
    return (record.meta.tags or {}).get("type") == "report" and record.meta.specName == SPEC


def stored(data: DataRepository, owner_type: str, owner_id: str, report: str | None = None) -> list[DataRecord]:
    """Every stored report version of an owner (or one report's), oldest first."""
    try:
        names = data.names(owner_type, owner_id)
    except (NotFoundError, FileNotFoundError):
        return []
    out = []
    for name in sorted(names):
        if not name.startswith(PREFIX) or (report is not None and name != data_name(report)):
            continue
        out += [r for r in data.records(owner_type, owner_id, name) if is_report(r)]
    return sorted(out, key=lambda r: (r.meta.createdAt, r.meta.name, r.meta.version))


def read(data: DataRepository, record: DataRecord) -> dict:
    return json.loads(data.content(record))


def row(record: DataRecord) -> dict:
    tags = record.meta.tags or {}
    owner = record.meta.owner
    return {"report": tags.get("report"), "scope": tags.get("scope"), "status": tags.get("status"),
            "runId": tags.get("runId"), "runStatus": tags.get("runStatus") or None,
            "owner": (owner or {}).get("definitionName"), "dataName": record.meta.name, "version": record.meta.version,
            "createdAt": record.meta.createdAt}
